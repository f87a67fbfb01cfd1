"""The numpy backend's machinery, shared by the operators' NumPy kernels: the convolution
engines (``conv``), plans (``plans``: checks once per call signature), worker threads and
scratch arrays (``workers``), thread placement (``placement``), BLAS thread control
(``blas``), the small-problem matrix path (``small``), NumPy's ufunc buffer (``ufunc_buffer``)
and the progress line of long calls (``progress``). It imports no operator."""
