"""neuronxcc compatibility: `from neuronxcc import nki` serves nkic."""
