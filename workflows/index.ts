// The workflows the worker registers (bundled for the workflow sandbox).
export { agentTask } from './agent';
export { evaluation } from './evaluation';
export { forkBranches } from './fork-branches';
export { scheduleMonitor } from './monitor';
export { notification } from './notification';
export { signinLock } from './signin-lock';
