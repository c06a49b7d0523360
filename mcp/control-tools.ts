// The MCP tools that act on a task: reply_to_task, steer_task (say, pause, resume, cancel), fork_task and
// replay_task. Each is one call of the typed client. Approvals and providers' safety checks are meant for a person:
// a caller's reply to one is refused unless the config lets callers answer them (mcp.callersMayApprove). Fork and
// replay take a task id, never a folder path, so no caller makes this server read its disk.
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { TaskSnapshot } from '../client/client';
import { sleep } from '../src/common/sleep';
import { answer, guarded, McpRefusal, taskIdArg } from './deps';
import type { McpDeps } from './deps';
import { PERSON_QUESTION_KINDS, taskView } from './task-view';

/** The question the reply answers, checked against what callers may answer; its id, so a newer one is not answered. */
async function answerableQuestion(
  deps: McpDeps,
  id: string,
  questionId: string | undefined,
): Promise<string | undefined> {
  const snap = await (await deps.client()).status(id);
  const q = snap.question;
  if (!q) return questionId; // the client refuses the reply in its own words
  const kind = q.kind ?? 'model';
  if (!deps.callersMayApprove && PERSON_QUESTION_KINDS.includes(kind)) {
    throw new McpRefusal(
      `task ${id} waits for a person's answer (a question of kind ${kind}): answer it in the console or with ` +
        `\`npx cua reply ${id} "…"\`; this server's callers may not (config mcp.callersMayApprove)`,
    );
  }
  return questionId ?? q.id;
}

/** How long a reply waits for the task to take it up, so that its answer (and a wait after it) no longer shows it. */
const REPLY_TAKEN_UP_MS = 5_000;

/** The task's state once it no longer waits on the answered question (or after a few seconds, as it is then). */
async function afterReply(deps: McpDeps, id: string, questionId: string | undefined): Promise<TaskSnapshot> {
  const agent = await deps.client();
  const until = Date.now() + REPLY_TAKEN_UP_MS;
  for (;;) {
    const snap = await agent.status(id);
    if (snap.closed || !snap.question || snap.question.id !== questionId || Date.now() >= until) return snap;
    await sleep(Math.min(deps.pollMs ?? 500, 200));
  }
}

export function registerControlTools(server: McpServer, deps: McpDeps): void {
  server.registerTool(
    'reply_to_task',
    {
      title: "Answer a task's question",
      description:
        'Answers the question a task waits on (status waiting_for_user); the task goes on with the answer. Give the ' +
        "question's id to be sure you answer that one (a newer question is not answered by mistake). Approvals and " +
        "providers' safety checks are for a person and are refused here unless the server allows it. Returns the " +
        "task's state after the reply.",
      inputSchema: {
        task_id: taskIdArg,
        text: z.string().describe('The answer, in plain words'),
        question_id: z.string().optional().describe("The question's id from get_task (recommended)"),
      },
      annotations: { destructiveHint: false },
    },
    ({ task_id, text, question_id }) =>
      guarded(async () => {
        const agent = await deps.client();
        const questionId = await answerableQuestion(deps, task_id, question_id);
        await agent.reply(task_id, text, questionId ? { questionId } : {});
        return answer(await taskView(deps, await afterReply(deps, task_id, questionId)));
      }),
  );

  server.registerTool(
    'steer_task',
    {
      title: 'Steer a running task',
      description:
        'Steers a task: say (tell it something; the model reads it with its next step), pause (after the step under ' +
        'way; its page is kept), resume (a paused task goes on), cancel (it ends; its run folder is kept). Returns ' +
        "the task's state after it.",
      inputSchema: {
        task_id: taskIdArg,
        action: z.enum(['say', 'pause', 'resume', 'cancel']),
        text: z.string().optional().describe('What to say (action say)'),
      },
      annotations: { destructiveHint: true },
    },
    ({ task_id, action, text }) =>
      guarded(async () => {
        const agent = await deps.client();
        if (action === 'say') await agent.say(task_id, text ?? '');
        else if (action === 'pause') await agent.pause(task_id);
        else if (action === 'resume') await agent.resume(task_id);
        else await agent.cancel(task_id);
        return answer(await taskView(deps, await agent.status(task_id)));
      }),
  );

  server.registerTool(
    'fork_task',
    {
      title: 'Fork a task at a step',
      description:
        "Starts a new task from another task's steps 1…step: it decides the next step anew in the page that step " +
        'left, with its own instruction or a hint if given. Returns the new task id and its state.',
      inputSchema: {
        task_id: taskIdArg,
        step: z.number().int().min(1).describe('The last step of the source the fork keeps'),
        instruction: z.string().optional().describe("The fork's instruction (default: the source's)"),
        hint: z.string().optional().describe('Told to the model with the fork’s first step'),
      },
      annotations: { destructiveHint: false, openWorldHint: true },
    },
    ({ task_id, step, instruction, hint }) =>
      guarded(async () => {
        const agent = await deps.client();
        const { id } = await agent.fork(task_id, {
          step,
          ...(instruction?.trim() ? { instruction: instruction.trim() } : {}),
          ...(hint?.trim() ? { hint: hint.trim() } : {}),
          ...(deps.policy ? { policy: deps.policy } : {}),
        });
        return answer(await taskView(deps, await agent.status(id)));
      }),
  );

  server.registerTool(
    'replay_task',
    {
      title: 'Replay a recorded task',
      description:
        "Runs a recorded browser task's actions again as a new task, without the model while the page matches the " +
        'recording; from the first step that does not, the model decides (or, strict, the task ends there). Returns ' +
        'the new task id and its state.',
      inputSchema: {
        task_id: taskIdArg,
        strict: z
          .boolean()
          .optional()
          .describe('End at the first step that does not match instead of asking the model'),
        recorded_replies: z
          .boolean()
          .optional()
          .describe('Answer a recorded question with its recorded reply (default: ask again)'),
      },
      annotations: { destructiveHint: false, openWorldHint: true },
    },
    ({ task_id, strict, recorded_replies }) =>
      guarded(async () => {
        const agent = await deps.client();
        const replay = await agent.replay(task_id, {
          ...(strict ? { strict: true } : {}),
          replies: recorded_replies ? 'recorded' : 'ask',
          ...(deps.policy ? { policy: deps.policy } : {}),
        });
        return answer(await taskView(deps, await agent.status(replay.id)));
      }),
  );
}
