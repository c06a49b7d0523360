// The desktop agent's model side: tool registry, reading outputs, prompts, grounding outputs and the rebuilt memory.
// Pure modules (no I/O), so workflow code may import them.
export {
  CALL_ERROR_PREFIX,
  DEFAULT_COMMAND_TIMEOUT_S,
  DESKTOP_TOOLS,
  DESKTOP_TOOL_NAMES,
  MAX_COMMAND_TIMEOUT_S,
  NOT_IMPLEMENTED,
  callObservation,
  canonicalToolName,
  checkCall,
  desktopTool,
  openAiTools,
  summarizeCall,
} from './tools';
export type { DesktopCall, DesktopTool, DesktopToolName } from './tools';
export { MAX_CALLS_PER_OUTPUT, NO_TOOL_CALL_ERROR, readToolCalls } from './parse';
export type { OutputCalls, OutputInput } from './parse';
export { EMPTY_OUTPUT_ERROR, attemptedCall, finalWords, noCallOutcome } from './no-call';
export type { NoCallOutcome } from './no-call';
export { describeMessages, groundingMessages, readDescription, systemPrompt } from './prompt';
export type { DescribeInput, Description, GroundingInput, SystemPromptInput } from './prompt';
export { parsePoint } from './grounding';
export type { PointResult, ScreenSize } from './grounding';
export {
  DEFAULT_MEMORY_TOKEN_BUDGET,
  MAX_ENTRY_CHARS,
  MEMORY_LABELS,
  WHAT_NEXT,
  currentScreenMessage,
  desktopMessages,
  memoryLines,
} from './memory';
export type { MemoryOptions } from './memory';
