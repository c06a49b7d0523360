// One word per concept (docs/architecture.md, Glossary): the names the code declares use the glossary's words. A
// declared name (a variable, parameter, function, class, interface, type, property or method) that uses an old word
// for a concept fails, unless it is a wire name kept on purpose: a property whose doc comment says "wire name" (a
// field recorded in histories, read by other clients or written to the run folder) or a `@deprecated` alias of the
// package's exports. Names are read with TypeScript's parser, so comments and strings do not count, and a wire field
// may still be read (`req.runId`) or written (`{ runId: taskId }`): only what the code names itself is checked.
// Text is checked for one phrase, "invalid reply" (the model's output is no reply).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../..');

/** An old name: what it matches in a declared name's words (camelCase and snake_case split), and the word to use. */
interface OldWord {
  /** Matches the declared name. */
  test(name: string): boolean;
  use: string;
  /** Files where the word names another concept and may stay (a provider's conversation turn). */
  except?: RegExp;
}

/** Code that speaks a provider's API, where a turn is the provider's: a message of its conversation, not a step. */
const PROVIDER_CODE =
  /^(src\/families\/(?!fara)[^/]+\/|src\/scripted\/(providers\/|provider-|chat-|script-turns|wire-|recorded)|test\/unit\/(family-|standin-|script-turns|scripted-providers|scripted-chat-formats))/;

/** The declared name's words, lowercase: `takeSlotForRun` → take, slot, for, run; `RUN_STATUSES` → run, statuses. */
export function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[\s_$]+/)
    .filter((w) => w !== '')
    .map((w) => w.toLowerCase());
}

const hasWords = (name: string, seq: readonly string[]): boolean => {
  const w = wordsOf(name);
  return w.some((_, i) => seq.every((s, k) => w[i + k] === s));
};

const OLD_WORDS: readonly OldWord[] = [
  {
    test: (n) => hasWords(n, ['run', 'id']) && !hasWords(n, ['temporal', 'run', 'id']),
    use: 'taskId (the task id), or temporalRunId',
  },
  { test: (n) => hasWords(n, ['run', 'status']) || hasWords(n, ['run', 'statuses']), use: 'TaskState' },
  { test: (n) => hasWords(n, ['run', 'not', 'found']), use: 'RunFolderNotFound or TaskNotFound' },
  { test: (n) => hasWords(n, ['turn']) || hasWords(n, ['turns']), use: 'step', except: PROVIDER_CODE },
  { test: (n) => hasWords(n, ['invalid', 'reply']) || hasWords(n, ['invalid', 'replies']), use: 'invalid output' },
  { test: (n) => hasWords(n, ['model', 'reply']), use: 'model output' },
  { test: (n) => hasWords(n, ['max', 'sessions']), use: 'slots' },
];

/** Declarations whose name the code chooses. */
function declaredName(node: ts.Node): ts.Identifier | null {
  if (
    ts.isVariableDeclaration(node) ||
    ts.isParameter(node) ||
    ts.isFunctionDeclaration(node) ||
    ts.isClassDeclaration(node) ||
    ts.isInterfaceDeclaration(node) ||
    ts.isTypeAliasDeclaration(node) ||
    ts.isEnumDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isPropertyDeclaration(node) ||
    ts.isPropertySignature(node) ||
    ts.isBindingElement(node)
  ) {
    return node.name && ts.isIdentifier(node.name) ? node.name : null;
  }
  if (ts.isShorthandPropertyAssignment(node)) return node.name;
  return null;
}

/**
 * A wire name kept on purpose: a comment on it, or on what it is part of up to its statement (the interface, the
 * property whose type it is in), says "wire name", or it is @deprecated.
 */
function keptOnPurpose(node: ts.Node, source: ts.SourceFile): boolean {
  for (let n: ts.Node | undefined = node; n && !ts.isSourceFile(n); n = n.parent) {
    const docs = ts.getJSDocCommentsAndTags(n).map((d) => d.getText(source));
    const leading = source.text.slice(n.getFullStart(), n.getStart(source)); // its comments, on its line or above
    if ([...docs, leading].some((t) => /wire name|@deprecated/i.test(t))) return true;
    if (ts.isStatement(n)) break;
  }
  return false;
}

export function oldNamesIn(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const id = declaredName(node);
    // A snake_case name is a field of the run folder or another program's (Fara's format: `run_id`): wire.
    const snake = id !== null && /^[a-z0-9]+(_[a-z0-9]+)+$/.test(id.text);
    const old = id && !snake ? OLD_WORDS.find((o) => o.test(id.text) && !o.except?.test(file)) : undefined;
    // A binding `{ runId: taskId }` names taskId; a property signature or a shorthand that is a wire name is kept.
    if (id && old && !keptOnPurpose(node, source)) {
      const line = source.getLineAndCharacterOfPosition(id.getStart(source)).line + 1;
      found.push(`${file}:${line} → ${id.text} (use ${old.use})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  text.split('\n').forEach((l, i) => {
    if (/\binvalid repl(y|ies)\b/i.test(l)) found.push(`${file}:${i + 1} → "invalid reply" (use invalid output)`);
  });
  return found;
}

const sources = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '*.ts'], {
  cwd: root,
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
})
  .split('\0')
  .filter((f) => f !== '' && !f.startsWith('test/fixtures/') && fs.existsSync(path.join(root, f)));

describe('the glossary', () => {
  it('every name the code declares uses the glossary word (wire names and deprecated aliases excepted)', () => {
    const found = sources.flatMap((f) =>
      f === 'test/unit/glossary.test.ts' ? [] : oldNamesIn(f, fs.readFileSync(path.join(root, f), 'utf8')),
    );
    expect(found).toEqual([]);
  });

  it('splits a name into its words', () => {
    expect(wordsOf('takeSlotForRun')).toEqual(['take', 'slot', 'for', 'run']);
    expect(wordsOf('RUN_STATUSES')).toEqual(['run', 'statuses']);
    expect(wordsOf('HTMLRunId')).toEqual(['html', 'run', 'id']);
  });

  it('finds an old word in a local, a parameter, a shorthand and a type, and keeps a marked wire field', () => {
    const text = [
      'const runId = 1;',
      'function f(lastTurn: number) { return { runId }; }',
      'type RunStatus = string;',
      'interface A {',
      '  /** The task id; wire name, kept so histories replay. */',
      '  runId: string;',
      '  maxSessions: number;',
      '}',
      '/** @deprecated use TaskState */',
      'export type RUN_STATUSES = string;',
      'const { runId: taskId } = req;',
      'const temporalRunId = h.runId;',
      'type Row = { run_id: string };',
      'const x = req.runId; // read of a wire field: fine',
      '// an invalid reply',
    ].join('\n');
    expect(oldNamesIn('x.ts', text)).toEqual([
      'x.ts:1 → runId (use taskId (the task id), or temporalRunId)',
      'x.ts:2 → lastTurn (use step)',
      'x.ts:2 → runId (use taskId (the task id), or temporalRunId)',
      'x.ts:3 → RunStatus (use TaskState)',
      'x.ts:7 → maxSessions (use slots)',
      'x.ts:15 → "invalid reply" (use invalid output)',
    ]);
  });
});
