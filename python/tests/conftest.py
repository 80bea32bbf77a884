import sys
from pathlib import Path

# The helpers next to the tests (vectors.py) import as plain modules.
sys.path.insert(0, str(Path(__file__).resolve().parent))
