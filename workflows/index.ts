// The workflows the worker registers (bundled for the workflow sandbox).
export { agentTask } from './agent';
export { evaluation } from './evaluation';
export { notification } from './notification';
