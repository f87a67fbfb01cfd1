"""The argument-conversion layer: every Python value -> C argument conversion lives here.
``values`` coerces Python values (tensors and array-likes, ints, bools, lists, numbers);
``arrays`` wraps the host-side handles (``IntArray``, ``BoolArray``, ``FloatArray``, ``Scalar``);
``executor`` makes the C handles of one operator call and runs its two phases (``Call``)."""
