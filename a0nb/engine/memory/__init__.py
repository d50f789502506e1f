"""Memory and knowledge: stores of embedded texts per folder (global or per project), the offline
embedders, the vector index and the knowledge import."""
from a0nb.engine.memory.embeddings import Embedder, EmbeddingError, HashEmbedder, make_embedder
from a0nb.engine.memory.filter import FilterError
from a0nb.engine.memory.knowledge import ImportReport, import_knowledge
from a0nb.engine.memory.memories import Memories, memories_of
from a0nb.engine.memory.store import AREAS, Memory, MemoryStore

__all__ = ["Embedder", "EmbeddingError", "HashEmbedder", "make_embedder", "FilterError", "ImportReport",
           "import_knowledge", "Memories", "memories_of", "AREAS", "Memory", "MemoryStore"]
