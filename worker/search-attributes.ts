// Our workflows publish CuaStatus, CuaStep, CuaEvaluation, CuaCost and CuaSchedule (a scheduled run's schedule); on a namespace that lacks one, each upsert fails
// its workflow task and the task stalls. The dev server and `cua infra` register them; a cluster set up before a new
// one was added (CuaCost) may lack it. The worker checks at start and refuses with the command that adds what is
// missing. A server that will not list them (no operator access) is not checked.
import type { NativeConnection } from '@temporalio/worker';
import { ConfigError } from '../src/common/config-error';
import { SEARCH_ATTRIBUTE_FLAGS } from '../src/infra/devserver';

/** Our search attributes the namespace lacks, as `name=Type`; undefined when the server does not say. */
export async function missingSearchAttributes(
  connection: NativeConnection,
  namespace: string,
): Promise<string[] | undefined> {
  try {
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    const known = new Set(Object.keys({ ...listed.customAttributes, ...listed.systemAttributes }));
    return SEARCH_ATTRIBUTE_FLAGS.filter((flag) => !known.has(flag.split('=')[0] ?? ''));
  } catch {
    return undefined;
  }
}

/** Refuses a namespace without our search attributes, naming the commands that add them. */
export async function checkSearchAttributes(connection: NativeConnection, namespace: string): Promise<void> {
  const missing = await missingSearchAttributes(connection, namespace);
  if (!missing?.length) return;
  const commands = missing.map((flag) => {
    const [name, type] = flag.split('=');
    return `temporal operator search-attribute create --namespace ${namespace} --name ${name} --type ${type}`;
  });
  throw new ConfigError(
    `namespace '${namespace}' lacks the search attribute(s) ${missing.join(', ')} that tasks publish ` +
      `(each task would stall at its first update); add them: ${commands.join(' && ')}`,
  );
}
