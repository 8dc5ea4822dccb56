"""Export of trained policies as deployable bundles (ONNX actor, metadata, robot-side files)."""
