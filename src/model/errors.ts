// Typed errors for the model side: why a model output could not be turned into an action, and why a prompt could
// not be built. Each class's `name` equals its class name, so Temporal can match it in nonRetryableErrorTypes.

interface ErrorOptions {
  cause?: unknown;
}

/** Base class of every failure to read an action out of a model output. */
export class ModelOutputError extends Error {
  /** The output's thoughts, when the parser got as far as finding them. */
  thoughts?: string;
  /** The arguments as the model wrote them (before any coercion), when a tool call could be decoded. */
  written?: Record<string, unknown>;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The output was empty or whitespace only. */
export class EmptyOutputError extends ModelOutputError {
  constructor() {
    super('The model returned an empty output');
  }
}

/** The output is longer than any action needs (a runaway or hostile endpoint); it is not read. */
export class OutputTooLongError extends ModelOutputError {
  constructor(
    readonly length: number,
    readonly limit: number,
  ) {
    super(`The model output is ${length} characters long; at most ${limit} are read`);
  }
}

/** The output has no `<tool_call>` tag (and no bare tool-call object either). */
export class MissingToolCallError extends ModelOutputError {
  constructor() {
    super('The model output has no <tool_call> block');
  }
}

/** The text inside `<tool_call>` is neither JSON nor a Python literal, or lacks the expected shape. */
export class ToolCallJsonError extends ModelOutputError {
  constructor(
    readonly toolCallText: string,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`The tool call could not be read: ${detail}`, options);
  }
}

/** The action is not one the family allows. */
export class UnknownActionError extends ModelOutputError {
  constructor(
    readonly action: string,
    readonly allowedActions: readonly string[],
  ) {
    super(`Unknown action "${action}"; allowed actions: ${allowedActions.join(', ')}`);
  }
}

/** The action is allowed but its arguments do not match its schema (missing, wrongly typed, out of range). */
export class InvalidActionArgumentsError extends ModelOutputError {
  constructor(
    readonly action: string,
    readonly field: string,
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(`Invalid arguments for action "${action}": field "${field}": ${detail}`, options);
  }
}

/** A user-supplied prompt file could not be used. */
export class PromptFileError extends Error {
  constructor(
    readonly path: string,
    readonly reason: 'missing' | 'not-a-file' | 'empty' | 'unreadable',
    options?: ErrorOptions,
  ) {
    super(PromptFileError.explain(path, reason), options);
    this.name = new.target.name;
  }

  private static explain(path: string, reason: PromptFileError['reason']): string {
    switch (reason) {
      case 'missing':
        return `Prompt file not found: ${path}`;
      case 'not-a-file':
        return `Prompt file is not a regular file: ${path}`;
      case 'empty':
        return `Prompt file is empty: ${path}`;
      case 'unreadable':
        return `Prompt file could not be read: ${path}`;
    }
  }
}

/** A prompt (file) offers actions the runtime cannot carry out for its family. */
export class PromptActionsError extends Error {
  constructor(
    readonly family: string,
    readonly unknown: readonly string[],
    readonly known: readonly string[],
  ) {
    super(`the prompt offers ${unknown.join(', ')}, which ${family} lacks (${family}'s actions: ${known.join(', ')})`);
    this.name = new.target.name;
  }
}

/** Shortened for a message: a custom identity text can be paragraphs long. */
function quoted(text: string): string {
  const one = text.replace(/\s+/g, ' ');
  return JSON.stringify(one.length > 40 ? `${one.slice(0, 39)}…` : one);
}

/**
 * An identity that is not in the registry and cannot be a custom text: too short for one (a mistyped name, most
 * likely), or given where only registry names are allowed (a task's own choice).
 */
export class UnknownIdentityError extends Error {
  constructor(
    readonly identity: string,
    readonly known: readonly string[],
    readonly why: 'too-short' | 'names-only' = 'too-short',
  ) {
    const hint =
      why === 'names-only'
        ? '; a custom identity text can be set only in the worker config (models.<name>.identity)'
        : ` (a custom identity text needs at least 20 characters)`;
    super(`unknown identity ${quoted(identity)}; known identities: ${known.join(', ')}${hint}`);
    this.name = new.target.name;
  }
}

/** A registry identity of another family than the one it is used with. */
export class IdentityProfileError extends Error {
  constructor(
    readonly identity: string,
    readonly owner: string,
    readonly family: string,
    readonly known: readonly string[],
  ) {
    super(`identity ${quoted(identity)} is ${owner}'s, not ${family}'s; ${family}'s identities: ${known.join(', ')}`);
    this.name = new.target.name;
  }
}
