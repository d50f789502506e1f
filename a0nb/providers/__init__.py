"""Model providers (Crystal Lattice contract): `init`, `initialize_request`, a stream of native
chunks folded by a hot-path `process_chunk`, and a cold-path `finalize`."""
from a0nb.providers.base import ModelConfig, ModelReply, Provider, StreamSink
from a0nb.providers.extension import ProviderExtension
from a0nb.providers.stream import complete

__all__ = ["ModelConfig", "ModelReply", "Provider", "ProviderExtension", "StreamSink", "complete"]
