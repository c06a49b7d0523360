// Every reference to a file of the repository resolves. In the markdown (README.md, docs/, the folders' READMEs) every
// relative link `[x](path)` or `[x](path#anchor)` names a file or folder of the repository, and its #anchor a heading
// of the target markdown file (GitHub's slugs). In the comments of the TypeScript sources a path names a file:
// - `dir/name.ext` (ext: ts, md, json, cjs, mjs, sh, py) is a repository path when its first folder is one seen from
//   the commenting file's folder or one of its parents (or api/, client/'s old name), and must then resolve from one
//   of them (`solver_log/status.json`, a run folder's file, is no repository path); `../` resolves from the file's
//   folder only; a `#anchor` after a markdown path must name one of its headings;
// - a bare `name.ext` (not JSON: bare JSON names are run-folder and config files) must be some file's name;
// - and the design document that lives outside the repository is not cited (by its name in capitals, with or
//   without .md or a section sign).
// The failures are listed as `file:line → reference (why)`.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../..');
/** The source folders whose .ts comments are checked. */
const SOURCE_FOLDERS = 'src workflows activities worker client cli console bench scripts examples demo eval test'.split(
  ' ',
);
/** Folders that are gone: a path into one is a repository path that no longer resolves. */
const GONE_FOLDERS = ['api'];

/** The repository's files (tracked, and new ones not ignored) that exist, '/'-separated from the root. */
const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
  cwd: root,
  encoding: 'utf8',
  maxBuffer: 64 * 1024 * 1024,
})
  .split('\0')
  .filter((f) => f !== '' && fs.existsSync(path.join(root, f)));
const fileSet = new Set(files);
const folderSet = new Set(
  files.flatMap((f) =>
    path.posix
      .dirname(f)
      .split('/')
      .map((_, i, parts) => parts.slice(0, i + 1).join('/')),
  ),
);
folderSet.add('');
const basenames = new Set(files.map((f) => path.posix.basename(f)));

/** A repository-relative path (no leading `./`, no trailing `/`), or null when it leaves the repository. */
function inRepo(from: string, target: string): string | null {
  const joined = path.posix.normalize(path.posix.join(from, target)).replace(/\/$/, '');
  if (joined === '.' || joined === '') return '';
  return joined.startsWith('../') || joined === '..' || path.posix.isAbsolute(joined) ? null : joined;
}

const exists = (p: string | null): p is string => p !== null && (fileSet.has(p) || folderSet.has(p));

/** GitHub's anchor for a heading's text: lowercase, punctuation dropped except - and _, spaces become -. */
function slug(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The text with fenced code blocks blanked (line numbers kept). */
function withoutFences(text: string): string {
  let inFence: string | null = null;
  return text
    .split('\n')
    .map((line) => {
      const fence = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
      if (inFence === null) {
        if (!fence) return line;
        inFence = fence;
      } else if (fence && fence[0] === inFence[0] && fence.length >= inFence.length && /^\s*[`~]+\s*$/.test(line)) {
        inFence = null;
      }
      return '';
    })
    .join('\n');
}

/** The text with inline code spans blanked (lengths and newlines kept). */
const withoutCodeSpans = (text: string) =>
  text.replace(/(`+)(?:(?!\1)[^\n]|\n(?![ \t]*\n))*?\1/g, (m) => m.replace(/[^\n]/g, ' '));

const anchorCache = new Map<string, Set<string>>();
/** The anchors of a markdown file: its headings' slugs (a repeated one gets -1, -2, …) and its explicit ids. */
function anchorsOf(file: string): Set<string> {
  const cached = anchorCache.get(file);
  if (cached) return cached;
  const text = withoutFences(fs.readFileSync(path.join(root, file), 'utf8'));
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of text.matchAll(/^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/gm)) {
    const base = slug(m[1] ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1] ?? '');
  anchorCache.set(file, anchors);
  return anchors;
}

const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** Why a link from `file` to `target` (`path`, `path#anchor` or `#anchor`) does not resolve; null when it does. */
function brokenLink(file: string, target: string): string | null {
  const hash = target.indexOf('#');
  const [pathPart, anchor] = hash < 0 ? [target, null] : [target.slice(0, hash), target.slice(hash + 1)];
  let decoded: string;
  try {
    decoded = decodeURI(pathPart);
  } catch {
    return 'not a valid URI';
  }
  const resolved = decoded === '' ? file : inRepo(path.posix.dirname(file), decoded);
  if (!exists(resolved)) return 'no such file or folder';
  if (anchor === null || !resolved.endsWith('.md') || !fileSet.has(resolved)) return null;
  return anchorsOf(resolved).has(decodeURIComponent(anchor)) ? null : `no heading #${anchor} in ${resolved}`;
}

/** The relative links of a markdown file (inline links, images, reference definitions), outside code. */
function linksOf(text: string): { target: string; line: number }[] {
  const clean = withoutCodeSpans(withoutFences(text));
  const inline =
    /!?\[(?:[^[\]]|\[[^[\]]*\])*\]\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
  const definitions = /^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)/gm;
  return [...clean.matchAll(inline), ...clean.matchAll(definitions)]
    .map((m) => ({ target: (m[1] ?? '').replace(/^<|>$/g, ''), line: lineAt(clean, m.index ?? 0) }))
    .filter(({ target }) => target !== '' && !/^(?:[a-z][a-z0-9+.-]*:|\/\/)/i.test(target));
}

/** The markdown files checked: README.md, docs/ and the folders' READMEs (not test fixtures). */
const markdownFiles = files.filter((f) => f.endsWith('.md') && !f.startsWith('test/fixtures/'));

/** Every broken relative link in a markdown file, as `file:line → target (why)`. */
function brokenLinksIn(file: string): string[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  return linksOf(text).flatMap(({ target, line }) => {
    const why = brokenLink(file, target);
    return why === null ? [] : [`${file}:${line} → ${target} (${why})`];
  });
}

const { SyntaxKind } = ts;
/** Tokens after which a `/` divides (else it begins a regular expression). */
const ENDS_OPERAND = new Set<ts.SyntaxKind>([
  ...[SyntaxKind.Identifier, SyntaxKind.PrivateIdentifier, SyntaxKind.NumericLiteral, SyntaxKind.BigIntLiteral],
  ...[SyntaxKind.StringLiteral, SyntaxKind.NoSubstitutionTemplateLiteral, SyntaxKind.TemplateTail],
  ...[SyntaxKind.RegularExpressionLiteral, SyntaxKind.CloseParenToken, SyntaxKind.CloseBracketToken],
  ...[SyntaxKind.CloseBraceToken, SyntaxKind.PlusPlusToken, SyntaxKind.MinusMinusToken, SyntaxKind.ThisKeyword],
  ...[SyntaxKind.SuperKeyword, SyntaxKind.TrueKeyword, SyntaxKind.FalseKeyword, SyntaxKind.NullKeyword],
]);

/** The comments of a TypeScript source, with where each starts (the scanner, re-scanning templates and regexes). */
function commentsOf(text: string): { start: number; text: string }[] {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const comments: { start: number; text: string }[] = [];
  const braces: ('{' | '${')[] = [];
  let previous: ts.SyntaxKind = SyntaxKind.Unknown;
  for (let kind = scanner.scan(); kind !== SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === SyntaxKind.SingleLineCommentTrivia || kind === SyntaxKind.MultiLineCommentTrivia) {
      comments.push({ start: scanner.getTokenStart(), text: scanner.getTokenText() });
      continue;
    }
    if (kind === SyntaxKind.WhitespaceTrivia || kind === SyntaxKind.NewLineTrivia) continue;
    if (kind === SyntaxKind.OpenBraceToken) braces.push('{');
    else if (kind === SyntaxKind.TemplateHead) braces.push('${');
    else if (kind === SyntaxKind.CloseBraceToken && braces.pop() === '${') {
      kind = scanner.reScanTemplateToken(false);
      if (kind === SyntaxKind.TemplateMiddle) braces.push('${');
    } else if (
      (kind === SyntaxKind.SlashToken || kind === SyntaxKind.SlashEqualsToken) &&
      !ENDS_OPERAND.has(previous)
    ) {
      kind = scanner.reScanSlashToken();
    }
    previous = kind;
  }
  return comments;
}

/** A path-like token with a known extension and an optional #anchor, not part of a URL, package or longer name. */
const PATH_TOKEN =
  /(?<![\w./@:-])((?:\.{1,2}\/)*(?:[\w.-]+\/)*[\w-][\w.-]*\.(ts|md|json|cjs|mjs|sh|py))(?:#([\w-]+))?(?![\w/-])/g;
const DESIGN_CITATION = /\bDESIGN\b(?:\.md)?(?:\s*§\s*\d+)?/g;

/** The folders a path in a comment of `file` may be relative to: its own folder, then each parent up to the root. */
function basesOf(file: string): string[] {
  const bases: string[] = [];
  for (let dir = path.posix.dirname(file); dir !== '.'; dir = path.posix.dirname(dir)) bases.push(dir);
  return [...bases, ''];
}

/** Why a path a comment of `file` names does not resolve; null when it does or is no repository path. */
function brokenReference(file: string, token: string, ext: string, anchor: string | undefined): string | null {
  const ref = token.replace(/^(?:\.\/)+/, '');
  let resolved: string | null;
  if (ref.startsWith('../')) {
    resolved = inRepo(path.posix.dirname(file), ref);
    if (!exists(resolved)) return 'no such file';
  } else if (ref.includes('/')) {
    const first = ref.split('/')[0] ?? '';
    const bases = basesOf(file).filter((b) => folderSet.has(path.posix.join(b, first)));
    if (bases.length === 0 && !GONE_FOLDERS.includes(first)) return null; // a run folder's path, not the repo's
    resolved = bases.map((b) => path.posix.join(b, ref)).find((p) => fileSet.has(p)) ?? null;
    if (resolved === null) return 'no such file';
  } else {
    if (ext === 'json') return null;
    if (!basenames.has(ref)) return 'no file of that name';
    resolved =
      basesOf(file)
        .map((b) => path.posix.join(b, ref))
        .find((p) => fileSet.has(p)) ?? null;
  }
  if (anchor === undefined || resolved === null || ext !== 'md') return null;
  return anchorsOf(resolved).has(anchor) ? null : `no heading #${anchor} in ${resolved}`;
}

/** Every broken file reference in a source file's comments, as `file:line → reference (why)`. */
function brokenReferencesIn(file: string): string[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const broken: string[] = [];
  for (const comment of commentsOf(text)) {
    const at = (index: number) => `${file}:${lineAt(text, comment.start + index)}`;
    for (const m of comment.text.matchAll(PATH_TOKEN)) {
      const [, token = '', ext = '', anchor] = m;
      const why = brokenReference(file, token, ext, anchor);
      if (why !== null) broken.push(`${at(m.index ?? 0)} → ${m[0]} (${why})`);
    }
    for (const m of comment.text.matchAll(DESIGN_CITATION)) {
      broken.push(`${at(m.index ?? 0)} → ${m[0]} (DESIGN is not in the repository: cite docs/architecture.md)`);
    }
  }
  return broken;
}

const sourceFiles = files.filter((f) => f.endsWith('.ts') && SOURCE_FOLDERS.includes(f.split('/')[0] ?? ''));

describe('references to files of the repository', () => {
  it('finds the files it checks', () => {
    expect(markdownFiles).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md']));
    expect(sourceFiles.length).toBeGreaterThan(100);
  });

  it('resolves relative links and their anchors in README.md and docs/', () => {
    expect(markdownFiles.flatMap(brokenLinksIn)).toEqual([]);
  });

  it('resolves the paths the source comments name, and cites no DESIGN', () => {
    expect(sourceFiles.flatMap(brokenReferencesIn)).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('makes GitHub slugs', () => {
    expect(slug('The run folder format')).toBe('the-run-folder-format');
    expect(slug('`cua reply`: answer a question!')).toBe('cua-reply-answer-a-question');
    expect(slug('[Links](x.md) and snake_case — too')).toBe('links-and-snake_case--too');
  });

  it('finds links outside code only, and skips URLs', () => {
    const text = '[a](x.md) `[b](y.md)` [c](https://e.org) [d](<z w.md> "t")\n```\n[e](f.md)\n```\n[r]: ../g.md#h';
    expect(linksOf(text)).toEqual([
      { target: 'x.md', line: 1 },
      { target: 'z w.md', line: 1 },
      { target: '../g.md#h', line: 5 },
    ]);
  });

  it('reads comments, not strings, templates or regular expressions', () => {
    const text = 'const a = "// x.ts"; const b = `${c} // y.ts`; const r = /\\/\\/ z.ts/; // w.ts\n/* v.ts */';
    expect(commentsOf(text).map((c) => c.text)).toEqual(['// w.ts', '/* v.ts */']);
  });

  it('tells repository paths from run-folder paths', () => {
    expect(brokenReference('src/trajectory/writer.ts', 'src/trajectory/layout.ts', 'ts', undefined)).toBeNull();
    expect(brokenReference('activities/session.ts', 'environments/table.ts', 'ts', undefined)).toBeNull();
    expect(brokenReference('src/trajectory/writer.ts', 'solver_log/status.json', 'json', undefined)).toBeNull();
    expect(brokenReference('src/runtime/config.ts', './cua.config.json', 'json', undefined)).toBeNull();
    expect(brokenReference('workflows/stages/limits.ts', '../agent-stops.ts', 'ts', undefined)).toBeNull();
    expect(brokenReference('workflows/stages/limits.ts', '../stops.ts', 'ts', undefined)).toBe('no such file');
    expect(brokenReference('cli/cli.ts', 'api/client.ts', 'ts', undefined)).toBe('no such file');
    expect(brokenReference('src/a.ts', 'src/agent/gone.ts', 'ts', undefined)).toBe('no such file');
    expect(brokenReference('src/a.ts', 'FORMAT.md', 'md', undefined)).toBe('no file of that name');
    expect(brokenReference('src/a.ts', 'docs/architecture.md', 'md', 'glossary')).toBeNull();
    expect(brokenReference('src/a.ts', 'docs/architecture.md', 'md', 'no-such')).toMatch(/no heading/);
  });

  it('finds citations of the design document outside the repository', () => {
    const cited = 'see DESIGN §4, DESIGN.md and DESIGN; not DESIGNS or design'.match(DESIGN_CITATION);
    expect(cited).toEqual(['DESIGN §4', 'DESIGN.md', 'DESIGN']);
  });
});
