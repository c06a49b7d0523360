// Public surface of the desktop layer: sessions and their pool, the sandbox's paths (and its proxy's address in
// network mode 'policy'), the key table, typed errors, and the availability check.
export { DesktopSession } from './session';
export type { DesktopNetwork, DesktopOptions } from './session';
export { DesktopPool } from './pool';
export type { DesktopOpenOptions, DesktopPoolOptions } from './pool';
export { DEFAULT_COMMAND_LIMITS, BACKGROUND_DIR } from './commands';
export type { BackgroundProcess, CommandLimits, CommandResult } from './commands';
export type { MouseButton, ScrollDirection, TypingOptions } from './input';
export type { DesktopWindow } from './windows';
export { DEFAULT_SANDBOX_HOST_UID, SANDBOX_HOME, SANDBOX_PROXY_URL, SANDBOX_USER } from './sandbox';
export { XDOTOOL_KEY_TABLE, normalizeChord, normalizeKey, normalizeKeys } from './keys';
export { pngSize } from './screenshot';
export { DESKTOP_APT_LINE, DESKTOP_BINARIES, desktopSupport, vncSupport } from '../infra/desktop-programs';
export { VncShare } from './vnc';
export { DesktopTakeovers } from './takeovers';
export type { DesktopSupport } from '../infra/desktop-programs';
export {
  CommandTimeoutLimitError,
  CoordinateOutOfRangeError,
  DesktopClosedError,
  DesktopCommandError,
  DesktopError,
  DesktopPoolFullError,
  DesktopTimeoutError,
  DesktopUnavailableError,
  SandboxError,
  UnknownDesktopSessionError,
  UnknownKeyError,
} from './errors';
