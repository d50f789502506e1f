"""The public extension API: every name an extension, tool, provider or plugin author imports.

Bundled extensions, tools and plugins import only from here (a test enforces it); anything not listed
in `__all__` is internal and may move. Extension points are listed in `POINTS` and as the constants
below, each documented with the keyword arguments its extensions receive (`help(a0nb.ext.POINTS)`)."""
from __future__ import annotations

from a0nb.engine.agent import Agent
from a0nb.engine.capture import Capture, capture_output
from a0nb.engine.timeouts import CodeTimeout, kill_children, time_limit
from a0nb.engine.composition import Section, section
from a0nb.engine.dirty_json import DirtyJson, parse_dirty
from a0nb.engine.documents import DocumentError, PassageIndex, rank_passages, read_document
from a0nb.engine.extract import first_closed_object
from a0nb.engine.extras import extra_text
from a0nb.engine.history import OutputItem, render_content
from a0nb.engine.loop import LoopData
from a0nb.engine.memory import AREAS as MEMORY_AREAS, EmbeddingError, FilterError, Memory, memories_of
from a0nb.engine.memory.knowledge import chunk_text
from a0nb.engine.memory.memorize import memorize
from a0nb.engine.mcp import attach as mcp_attach, mcp_of, tools_prompt as mcp_tools_prompt
from a0nb.engine.organize import compactor, organize_history, organize_step
from a0nb.engine.tool import Response, Tool
from a0nb.engine.tool_plugin import ToolPlugin
from a0nb.errors import A0Error, RepairableError
from a0nb.files.extensions import Extension, extensible
from a0nb.files.features import FOOTER_FIELDS, STATUS_FIELDS
from a0nb.files.file_tree import clean_ignore_list, file_tree
from a0nb.files.plugins import plugin_config
from a0nb.files.prompts import VariablesPlugin
from a0nb.files.points import FUNCTION_POINT_PREFIX, POINTS, Point
from a0nb.files.imports import alias_target as agent_zero_alias
from a0nb.files.secrets import StreamMasker, alias as secret_alias
from a0nb.files.skills import normalise_name, read_skill_file, search_skills, skill_text
from a0nb.files.source_import import source_spec
from a0nb.providers.chunks import delta_of, field
from a0nb.files.contracts import ContractError
from a0nb.files.feature_plugin import FeaturePlugin
from a0nb.files.feature_text import feature_templates, template_features
from a0nb.providers.extension import ProviderExtension
from a0nb.providers.lattice_core import LatticeCore, Session
from a0nb.providers.plugin_api import ProviderExtensionPlugin, ProviderPlugin
from a0nb.providers.think import ThinkSplitter
from a0nb.resources import user_home

# Extension points as constants (the folder names under `extensions/`); POINTS[name].kwargs and .doc
# say what each receives.
AGENT_INIT = "agent_init"
MONOLOGUE_START = "monologue_start"
MESSAGE_LOOP_START = "message_loop_start"
MESSAGE_LOOP_PROMPTS_BEFORE = "message_loop_prompts_before"
SYSTEM_PROMPT = "system_prompt"
MESSAGE_LOOP_PROMPTS_AFTER = "message_loop_prompts_after"
BEFORE_MAIN_LLM_CALL = "before_main_llm_call"
CHAT_MODEL_CALL_BEFORE = "chat_model_call_before"
CHAT_MODEL_CALL_AFTER = "chat_model_call_after"
UTIL_MODEL_CALL_BEFORE = "util_model_call_before"
UTIL_MODEL_CALL_AFTER = "util_model_call_after"
REASONING_STREAM_CHUNK = "reasoning_stream_chunk"
REASONING_STREAM = "reasoning_stream"
REASONING_STREAM_END = "reasoning_stream_end"
RESPONSE_STREAM_CHUNK = "response_stream_chunk"
RESPONSE_STREAM = "response_stream"
RESPONSE_STREAM_END = "response_stream_end"
TOOL_EXECUTE_BEFORE = "tool_execute_before"
TOOL_EXECUTE_AFTER = "tool_execute_after"
TOOL_OUTPUT_UPDATE = "tool_output_update"
HIST_ADD_BEFORE = "hist_add_before"
HIST_ADD_TOOL_RESULT = "hist_add_tool_result"
ERROR_FORMAT = "error_format"
MESSAGE_LOOP_END = "message_loop_end"
MONOLOGUE_END = "monologue_end"
PROCESS_CHAIN_END = "process_chain_end"
EMBEDDING_MODEL_CHANGED = "embedding_model_changed"
STARTUP_MIGRATION = "startup_migration"
BANNERS = "banners"
USER_MESSAGE_UI = "user_message_ui"
JOB_LOOP = "job_loop"
CALL_RECORDED = "call_recorded"
HISTORY_COMPACTED = "history_compacted"
SKILLS_REATTACHED = "skills_reattached"

__all__ = [
    # extensions and tools
    "Extension", "extensible", "Tool", "Response", "ToolPlugin", "LoopData", "POINTS", "Point",
    "FUNCTION_POINT_PREFIX", "A0Error", "RepairableError", "VariablesPlugin",
    # system prompt sections and history
    "Section", "section", "OutputItem", "render_content", "organize_history", "organize_step", "compactor",
    "extra_text",
    # skills, plugins, files, secrets
    "skill_text", "search_skills", "read_skill_file", "normalise_name", "plugin_config", "file_tree",
    "clean_ignore_list", "secret_alias", "FOOTER_FIELDS", "STATUS_FIELDS",
    # running agent code: output captured at the file-descriptor level, time limits it cannot catch
    "Capture", "capture_output", "time_limit", "CodeTimeout", "kill_children",
    # documents as text (local files, http(s) URLs, HTML, PDF), passages, ranking
    "read_document", "chunk_text", "rank_passages", "PassageIndex", "DocumentError",
    # memory and MCP
    "memories_of", "memorize", "Memory", "MEMORY_AREAS", "EmbeddingError", "FilterError", "mcp_of",
    "mcp_attach", "mcp_tools_prompt",
    # providers
    "ProviderExtension", "ThinkSplitter", "delta_of", "field",
    # for a0nb.compat (Agent Zero's names): the agent, reply parsing, stream masking, the user's a0nb home
    "Agent", "DirtyJson", "parse_dirty", "first_closed_object", "StreamMasker", "agent_zero_alias", "user_home",
    "source_spec",
    # Crystal Lattice plugin contracts (also importable as agent_core.types in files a0nb loads)
    "ProviderPlugin", "ProviderExtensionPlugin", "FeaturePlugin", "ToolPlugin", "ContractError",
    "LatticeCore", "Session", "feature_templates", "template_features",
] + [name for name, value in list(globals().items()) if name.isupper() and isinstance(value, str) and value in POINTS]
