"""``python3 -m trellis.serving --model-dir DIR``: see ``trellis.serving.server``."""
import sys

from trellis.serving.server import main

sys.exit(main())
