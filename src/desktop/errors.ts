// Typed failures of the desktop layer; `name` always equals the class name so callers (and Temporal's
// nonRetryableErrorTypes) can match on it.

export class DesktopError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A program the desktop needs (Xvfb, xdotool, bwrap, …) is missing, or the display did not come up. */
export class DesktopUnavailableError extends DesktopError {}

/** The bubblewrap sandbox could not be started, or it is gone. */
export class SandboxError extends DesktopError {}

/** The session was closed (or its sandbox or display died) before this operation. */
export class DesktopClosedError extends DesktopError {}

/** A helper program run against the display (xdotool, scrot, xprop) failed or hung. */
export class DesktopCommandError extends DesktopError {}

/** A point outside the screen. */
export class CoordinateOutOfRangeError extends DesktopError {}

/** A key name neither the key table nor the list of plain characters knows. */
export class UnknownKeyError extends DesktopError {
  constructor(
    readonly key: string,
    options?: { cause?: unknown },
  ) {
    super(
      `Unknown key "${key}". Use names such as Enter, Escape, Tab, Backspace, Delete, space, Up, PageDown, Home, F5, ` +
        'or chords such as ctrl+s, ctrl+shift+t, alt+F4, super; several chords are separated by spaces ' +
        '("ctrl+a Delete"). To enter text, use `type` instead.',
      options,
    );
  }
}

/** A command timeout that is not a positive number or is above the session's maximum. */
export class CommandTimeoutLimitError extends DesktopError {}

/** No open desktop session has this id (never opened, or closed). */
export class UnknownDesktopSessionError extends DesktopError {}

/** The pool already holds its maximum number of desktop sessions. */
export class DesktopPoolFullError extends DesktopError {}

/** A condition polled for did not become true before its deadline. */
export class DesktopTimeoutError extends DesktopError {}
