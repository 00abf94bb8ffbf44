"""The registry's benchmark: bulk load, card fetch against a baseline, discovery at two sizes.

Run it with ``python -m bench`` (``make bench``); see bench/README.md.
"""
