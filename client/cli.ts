// The `cua` command line: parses the command word and hands over to one small module per command.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const HELP = `cua — a durable computer-use agent on Temporal

Usage: npx cua <command> [options]

Commands:
  --help, -h       show this help
  --version, -v    print the version

Run \`npx cua <command> --help\` for a command's options.`;

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

function version(): string {
  const pkg = JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
  return pkg.version;
}

export async function main(argv: readonly string[]): Promise<number> {
  const [command] = argv;
  try {
    if (!command || command === '--help' || command === '-h' || command === 'help') {
      console.log(HELP);
      return 0;
    }
    if (command === '--version' || command === '-v') {
      console.log(version());
      return 0;
    }
    throw new UsageError(`unknown command '${command}' (see npx cua --help)`);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`cua: ${err.message}`);
      return 2;
    }
    throw err;
  }
}
