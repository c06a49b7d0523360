// Serves the small hotel-booking fixture site (the one the integration tests use) until Ctrl-C.
// `npx tsx scripts/serve-fixture-site.ts` prints its URL.
import { startFixtureSite } from '../test/fixtures/site/server';

async function main(): Promise<void> {
  const site = await startFixtureSite(Number(process.env.PORT ?? 0));
  console.log(`fixture site on ${site.url}/ (Ctrl-C stops it)`);
  await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
  await site.close();
}

void main();
