// The LLM judge's prompts, our own text, one builder per stage. The method follows Online-Mind2Web's WebJudge: the
// task is first reduced to the key points a successful run must satisfy, then each screenshot of the run is rated
// for how much it shows about those points, and the verdict is asked for with only the best screenshots attached,
// next to the agent's actions and its final answer. The rubric variant scores criteria (the task set's own, or the
// key points) one by one. A task with a reference answer (WebVoyager's answers file, our `reference_answer`) shows it
// to the key-points, verdict and rubric calls as a hint only: a live site changes, so the agent's answer need not match
// it. Pure: messages in the OpenAI chat shape, images as data URLs given by the caller.
import type { ChatMessage } from '../model/client';

type Part = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

const text = (t: string): Part => ({ type: 'text', text: t });
const image = (url: string): Part => ({ type: 'image_url', image_url: { url } });

const numbered = (items: readonly string[]) => items.map((s, i) => `${i + 1}. ${s}`).join('\n');

/** The reference answer as the judge is shown it: a hint that may be out of date, never a string to match. */
function referenceHint(reference: string | null, use: string): string {
  if (!reference?.trim()) return '';
  return (
    `\n\nReference answer (recorded when the task was written): ${reference.trim()}\n` +
    `This is a hint only. The site is live and may have changed since, so a correct answer need not match it word ` +
    `for word, nor in every value. ${use}`
  );
}

/**
 * Stage 1 (key points): the task alone, no run (with its reference answer, if any, to make plain what it asks for).
 * The model lists the requirements a successful run must meet, so the later stages check against explicit points
 * rather than a loose reading of the task.
 */
export function keyPointsMessages(task: string, reference: string | null = null): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You help grade web agents. Given a task a user gave to an agent that operates a web browser, list the key ' +
        'points a run must satisfy to count as a success: each explicit requirement of the task (the item or page ' +
        'asked for, every filter, quantity, date, price bound, sort order or other condition, and the piece of ' +
        'information to report). Keep the words of the task; do not add requirements it does not state, and do ' +
        'not split one requirement into several.\n\n' +
        'Answer with a numbered list only, one key point per line:\n1. …\n2. …',
    },
    {
      role: 'user',
      content:
        `Task: ${task}` +
        referenceHint(
          reference,
          'Use it only to understand what kind of information or result the task asks for; do not make its wording or its values a key point.',
        ),
    },
  ];
}

/**
 * Stage 2 (screenshot relevance), once per screenshot: how much this one screenshot shows about the key points, on
 * a 1–5 scale, with a short reason. Only screenshots rated at or above the threshold reach the verdict.
 */
export function relevanceMessages(
  task: string,
  keyPoints: readonly string[],
  label: string,
  url: string,
): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You help grade web agents. You see one screenshot taken while an agent worked on a task, and the key ' +
        'points of that task. Say what the screenshot shows that bears on the key points (a search result, a ' +
        'filter that is set, a detail page, a confirmation, an error), then rate how useful it is as evidence of ' +
        'whether the task was done:\n' +
        '1 = nothing relevant; 2 = little; 3 = some relevant content; 4 = important evidence; 5 = shows a key ' +
        'point being met (or clearly not met).\n\n' +
        'End your answer with a line of the form\nScore: <1-5>',
    },
    {
      role: 'user',
      content: [text(`Task: ${task}\n\nKey points:\n${numbered(keyPoints)}\n\nScreenshot: ${label}`), image(url)],
    },
  ];
}

export interface EvidenceShot {
  label: string;
  url: string;
  /** What the relevance stage said this screenshot shows. */
  note: string;
}

function runContext(
  task: string,
  keyPoints: readonly string[],
  actions: readonly string[],
  answer: string | null,
  heading: string,
  reference: string | null,
): string {
  return (
    `Task: ${task}\n\n${heading}:\n${numbered(keyPoints)}\n\n` +
    `Actions the agent took:\n${actions.length ? numbered(actions) : '(none)'}\n\n` +
    `The agent's final answer: ${answer?.trim() ? answer : '(none)'}` +
    referenceHint(
      reference,
      'Judge by what the screenshots show: an answer that differs from the reference but is supported by them is ' +
        'acceptable; an answer that matches neither the reference nor the screenshots is not.',
    )
  );
}

function evidence(shots: readonly EvidenceShot[]): Part[] {
  if (shots.length === 0) return [text('\n\nNo screenshot of the run was found relevant.')];
  return [
    text(`\n\nThe ${shots.length} most relevant screenshot(s) of the run follow, in the order they were taken.`),
    ...shots.flatMap((s) => [text(`\n${s.label}${s.note ? ` — ${s.note}` : ''}`), image(s.url)]),
  ];
}

/**
 * Stage 3 (verdict): task, key points, the agent's actions and answer (and the reference answer, as a hint), and the
 * selected screenshots. Strict by design: a key point not visibly met, an unapplied filter, or an answer the
 * screenshots do not support is a failure.
 */
export function verdictMessages(
  task: string,
  keyPoints: readonly string[],
  actions: readonly string[],
  answer: string | null,
  shots: readonly EvidenceShot[],
  reference: string | null = null,
): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You grade whether a web agent accomplished a task. You get the task, its key points, the actions the ' +
        'agent took, its final answer, and the screenshots of its run that matter most. Judge from this evidence, ' +
        'not from what the agent claims:\n' +
        '- every key point must be met; a missing filter, the wrong item, or a condition only partly met is a ' +
        'failure;\n' +
        '- a final answer the screenshots and actions do not support (invented, or read from the wrong page) is a ' +
        'failure;\n' +
        '- if the task asks for information, the final answer must give it; if it asks for an action on the site, ' +
        'the run must show it done (a confirmation, a changed state);\n' +
        '- the agent stopping for a reason outside its control (a login wall, a site error) is still a failure.\n\n' +
        'Answer in this form:\nReasons: <what the evidence shows about each key point>\nVerdict: success|failure',
    },
    {
      role: 'user',
      content: [text(runContext(task, keyPoints, actions, answer, 'Key points', reference)), ...evidence(shots)],
    },
  ];
}

/**
 * The rubric variant's scoring call: each criterion scored 0–1 (partial credit allowed) with a reason, and an overall
 * score, as one JSON object. The reference answer, if any, is a hint as in the verdict.
 */
export function rubricMessages(
  task: string,
  criteria: readonly string[],
  actions: readonly string[],
  answer: string | null,
  shots: readonly EvidenceShot[],
  reference: string | null = null,
): ChatMessage[] {
  return [
    {
      role: 'system',
      content:
        'You grade a web agent against a rubric. You get the task, the rubric criteria, the actions the agent took, ' +
        'its final answer, and the screenshots of its run that matter most. Score each criterion from 0 (not met) ' +
        'to 1 (fully met) by what the evidence shows; partial credit is allowed. Then give an overall score from 0 ' +
        'to 1 for the whole task (a run that misses an essential criterion should score below 0.5).\n\n' +
        'Answer with one JSON object and nothing else:\n' +
        '{"criteria": [{"criterion": 1, "score": 0.0, "reason": "…"}, …], "overall": 0.0, "reasoning": "…"}',
    },
    {
      role: 'user',
      content: [text(runContext(task, criteria, actions, answer, 'Rubric criteria', reference)), ...evidence(shots)],
    },
  ];
}
