"""The runtime layer: loading a backend's libraries and the per-thread state kept on them
(``library``, ``loader``), the calling thread's device (``current_device``, ``device``), backend
selection (``backend``), the ``Transaction`` every handle is released through (``resources``),
the device-memory limit the numpy backend shares with the simulator (``memory``), which
operator call queued work that failed later, and ``ACLNN_PY_BLOCKING`` (``queued``), and device
memory owned from Python (``tensor``: ``Tensor``, ``DeviceBuffer``, ``DeviceView``)."""
