"""Per-op cases for the recurrent operators LSTM, GRU and RNN.

Expected outputs come from small numpy float64 implementations of the ONNX formulas written here
(gate orders: LSTM i, o, f, c; GRU z, r, h), never from Trellis. Covered: forward, reverse and
bidirectional; with and without B; initial states; LSTM peepholes, input_forget and clip; GRU
linear_before_reset; non-default activations; layout 1; batch 2; sequence_lens; hidden sizes
that are not multiples of 8; and subsets of the outputs.
"""
import numpy as np

from opcase import save_case

F32 = np.float32
I32 = np.int32
RNG = np.random.RandomState(4044)


def rand(*shape, scale=0.5):
    return (RNG.uniform(-1.0, 1.0, size=shape) * scale).astype(F32)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


ACT = {
    "Sigmoid": sigmoid,
    "Tanh": np.tanh,
    "Relu": lambda x: np.maximum(x, 0.0),
    "HardSigmoid": lambda x: np.clip(0.2 * x + 0.5, 0.0, 1.0),
    "LeakyRelu": lambda x: np.where(x >= 0, x, 0.01 * x),
}


def run_rnn(mode, X, W, R, B=None, seq_lens=None, init_h=None, init_c=None, P=None, direction="forward",
            acts=None, clip=None, input_forget=0, linear_before_reset=0, layout=0):
    """Returns Y, Y_h, Y_c (float64) by the ONNX formulas. X/states in the given layout."""
    X = X.astype(np.float64)
    if layout == 1:
        X = X.transpose(1, 0, 2)
        if init_h is not None:
            init_h = init_h.transpose(1, 0, 2)
        if init_c is not None:
            init_c = init_c.transpose(1, 0, 2)
    seq, batch, _ = X.shape
    dirs = W.shape[0]
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[mode]
    H = R.shape[2]
    per = {"LSTM": 3, "GRU": 2, "RNN": 1}[mode]
    if acts is None:
        acts = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}[mode] * dirs
    lens = np.full(batch, seq) if seq_lens is None else seq_lens
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    Y = np.zeros((seq, dirs, batch, H))
    Yh = np.zeros((dirs, batch, H))
    Yc = np.zeros((dirs, batch, H))
    for d in range(dirs):
        f, g = ACT[acts[d * per]], ACT[acts[d * per + 1]] if per > 1 else None
        hfn = ACT[acts[d * per + 2]] if per > 2 else None
        w = W[d].astype(np.float64)
        r = R[d].astype(np.float64)
        wb = B[d, :G * H].astype(np.float64) if B is not None else np.zeros(G * H)
        rb = B[d, G * H:].astype(np.float64) if B is not None else np.zeros(G * H)
        p = P[d].astype(np.float64) if P is not None else np.zeros(3 * H)
        reverse = direction == "reverse" or d == 1
        for b in range(batch):
            h = init_h[d, b].astype(np.float64) if init_h is not None else np.zeros(H)
            c = init_c[d, b].astype(np.float64) if init_c is not None else np.zeros(H)
            n = int(lens[b])
            for s in range(n):
                t = n - 1 - s if reverse else s
                x = X[t, b]
                if mode == "RNN":
                    h = f(cl(x @ w.T + h @ r.T + wb + rb))
                elif mode == "LSTM":
                    gates = x @ w.T + h @ r.T + wb + rb
                    gi, go, gf, gc = np.split(gates, 4)
                    i = f(cl(gi + p[:H] * c))
                    fg = 1.0 - i if input_forget else f(cl(gf + p[2 * H:] * c))
                    c = fg * c + i * g(cl(gc))
                    o = f(cl(go + p[H:2 * H] * c))
                    h = o * hfn(c)
                else:
                    gx = x @ w.T + wb
                    wz, wr, wh = np.split(gx, 3)
                    rz = h @ r[:H].T + rb[:H]
                    rr = h @ r[H:2 * H].T + rb[H:2 * H]
                    z = f(cl(wz + rz))
                    rg = f(cl(wr + rr))
                    if linear_before_reset:
                        ht = g(cl(wh + rg * (h @ r[2 * H:].T + rb[2 * H:])))
                    else:
                        ht = g(cl(wh + (rg * h) @ r[2 * H:].T + rb[2 * H:]))
                    h = (1.0 - z) * ht + z * h
                Y[t, d, b] = h
            Yh[d, b] = h
            Yc[d, b] = c
    if layout == 1:
        Y = Y.transpose(2, 0, 1, 3)
        Yh = Yh.transpose(1, 0, 2)
        Yc = Yc.transpose(1, 0, 2)
    return Y.astype(F32), Yh.astype(F32), Yc.astype(F32)


def case(out, name, mode, seq, batch, inp, H, direction="forward", bias=True, init=False, peep=False,
         seq_lens=None, layout=0, acts=None, clip=None, input_forget=0, linear_before_reset=0, outputs=None,
         weights_as_inputs=False):
    dirs = 2 if direction == "bidirectional" else 1
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[mode]
    X = rand(seq, batch, inp, scale=1.0) if layout == 0 else rand(batch, seq, inp, scale=1.0)
    W = rand(dirs, G * H, inp)
    R = rand(dirs, G * H, H)
    B = rand(dirs, 2 * G * H) if bias else None
    state_shape = (dirs, batch, H) if layout == 0 else (batch, dirs, H)
    init_h = rand(*state_shape) if init else None
    init_c = rand(*state_shape) if init and mode == "LSTM" else None
    P = rand(dirs, 3 * H) if peep else None
    Y, Yh, Yc = run_rnn(mode, X, W, R, B, seq_lens, init_h, init_c, P, direction, acts, clip, input_forget,
                        linear_before_reset, layout)
    attrs = {"hidden_size": H, "direction": direction}
    if layout:
        attrs["layout"] = 1
    if acts:
        attrs["activations"] = acts
    if clip:
        attrs["clip"] = clip
    if input_forget:
        attrs["input_forget"] = 1
    if linear_before_reset:
        attrs["linear_before_reset"] = 1
    # Node inputs in ONNX order; X and sequence_lens are graph inputs, the rest initializers
    # (or graph inputs with weights_as_inputs).
    slots = [("X", X), ("W", W), ("R", R), ("B", B),
             ("sequence_lens", None if seq_lens is None else np.asarray(seq_lens, dtype=I32)),
             ("initial_h", init_h), ("initial_c", init_c), ("P", P)]
    if mode != "LSTM":
        slots = slots[:6]
    while slots[-1][1] is None:
        slots.pop()
    order = [n if a is not None else "" for n, a in slots]
    graph_inputs, inits = [], []
    for n, a in slots:
        if a is None:
            continue
        if n in ("X", "sequence_lens") or weights_as_inputs:
            graph_inputs.append((n, a))
        else:
            inits.append((n, a))
    all_outs = [("Y", Y), ("Y_h", Yh), ("Y_c", Yc)][:3 if mode == "LSTM" else 2]
    outs = [o for o in all_outs if outputs is None or o[0] in outputs]
    # Unused outputs are left unnamed in the node.
    from onnx import helper
    from opcase import save_graph_case, tensor_type
    from onnx import numpy_helper
    node_outs = [n if (outputs is None or n in outputs) else "" for n, _ in all_outs]
    while node_outs and node_outs[-1] == "":
        node_outs.pop()
    node = helper.make_node(mode, order, node_outs, **attrs)
    gi = [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape) for n, a in graph_inputs]
    go = [helper.make_tensor_value_info(n, tensor_type(a.dtype), a.shape) for n, a in outs]
    graph = helper.make_graph([node], name, gi, go, initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    save_graph_case(out, name, graph, [a for _, a in graph_inputs], [a for _, a in outs], opset=14)


def generate(out):
    # LSTM
    case(out, "lstm_fwd_h5", "LSTM", 4, 1, 3, 5)
    case(out, "lstm_fwd_nobias_b2", "LSTM", 3, 2, 4, 7, bias=False)
    case(out, "lstm_reverse_init", "LSTM", 5, 2, 3, 6, direction="reverse", init=True)
    case(out, "lstm_bidir_peep_init", "LSTM", 4, 2, 5, 9, direction="bidirectional", init=True, peep=True)
    case(out, "lstm_layout1_bidir", "LSTM", 3, 2, 4, 5, direction="bidirectional", init=True, layout=1)
    case(out, "lstm_seq_lens_bidir", "LSTM", 5, 2, 3, 4, direction="bidirectional", seq_lens=[5, 3], init=True)
    case(out, "lstm_clip_input_forget", "LSTM", 4, 2, 3, 5, clip=0.4, input_forget=1, peep=True)
    case(out, "lstm_acts", "LSTM", 3, 2, 3, 5, acts=["HardSigmoid", "LeakyRelu", "Tanh"])
    case(out, "lstm_only_yh", "LSTM", 4, 2, 3, 5, outputs=["Y_h"])
    case(out, "lstm_only_yc_runtime_weights", "LSTM", 3, 2, 3, 6, outputs=["Y_c"], weights_as_inputs=True, init=True)
    # GRU
    case(out, "gru_fwd_h5", "GRU", 4, 1, 3, 5)
    case(out, "gru_fwd_nobias_b2", "GRU", 3, 2, 4, 7, bias=False)
    case(out, "gru_reverse_init", "GRU", 5, 2, 3, 6, direction="reverse", init=True)
    case(out, "gru_bidir_lbr", "GRU", 4, 2, 5, 9, direction="bidirectional", init=True, linear_before_reset=1)
    case(out, "gru_fwd_lbr_b2", "GRU", 4, 2, 3, 5, linear_before_reset=1)
    case(out, "gru_layout1_bidir", "GRU", 3, 2, 4, 5, direction="bidirectional", init=True, layout=1)
    case(out, "gru_seq_lens", "GRU", 5, 2, 3, 4, seq_lens=[2, 5], init=True)
    case(out, "gru_clip_acts", "GRU", 4, 2, 3, 5, clip=0.3, acts=["Sigmoid", "Relu"])
    # RNN
    case(out, "rnn_fwd_h5", "RNN", 4, 1, 3, 5)
    case(out, "rnn_fwd_nobias_b2", "RNN", 3, 2, 4, 7, bias=False)
    case(out, "rnn_reverse_init", "RNN", 5, 2, 3, 6, direction="reverse", init=True)
    case(out, "rnn_bidir_init", "RNN", 4, 2, 5, 9, direction="bidirectional", init=True)
    case(out, "rnn_layout1", "RNN", 3, 2, 4, 5, init=True, layout=1)
    case(out, "rnn_seq_lens_reverse", "RNN", 5, 2, 3, 4, direction="reverse", seq_lens=[3, 5])
    case(out, "rnn_relu_only_y", "RNN", 3, 2, 3, 5, acts=["Relu"], outputs=["Y"])
