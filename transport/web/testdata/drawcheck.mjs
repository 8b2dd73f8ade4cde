// Runs the page's verifier (static/drawcheck.js, copied as drawcheck.mjs so
// that node loads it as an ES module) on one reveal:
// node drawcheck.mjs drawcheck.mjs input.json, where input is
// {reveal, noted, number, told}; prints {ok, position, steps}.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const { check } = await import(pathToFileURL(process.argv[2]).href);
const input = JSON.parse(readFileSync(process.argv[3], 'utf8'));
const r = await check(input.reveal, input.noted ?? null, input.number ?? null, input.told ?? null);
process.stdout.write(JSON.stringify({ ok: r.ok, position: r.position === null ? null : String(r.position), steps: r.steps }));
