"""Programs for the CUDA conv kernels, merged into `programs.PROGRAMS` (simulator tests and the
PTX check): (name, function, argument factory) entries, small shapes."""

PROGRAMS = []
