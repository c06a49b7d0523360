// Public surface of the action space: schemas and types, model families, the tool schema, and action helpers.
export {
  coordinateSchema,
  fara15ActionSchema,
  fara7bActionSchema,
  type ActionName,
  type ActionParamName,
  type AgentAction,
  type Fara15Action,
  type Fara7bAction,
} from './schemas';
export {
  FARA7B_DEFAULT_SCREEN,
  NORM_DISPLAY_SIZE,
  FARA_NAMES,
  isFaraName,
  type FaraSpace,
  type FaraName,
} from './fara';
export {
  TOOL_NAME,
  allowedActionsOf,
  buildToolSchema,
  type ScreenSize,
  type ToolParameter,
  type ToolSchema,
} from './tool-schema';
export { describeAction, describeCall, nlDescription, pythonJson, type DescribeOptions } from './describe';
export { actionPoint, type ModelPoint } from './point';
export { exampleActions } from './examples';
