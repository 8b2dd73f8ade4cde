// Computes the draw's test vectors with static/drawcheck.js (the page's
// verifier, an ES module) from their inputs:
// node drawvectors.mjs drawcheck.mjs vectors.json (the module copied with
// the .mjs extension, so that node loads it as one). Numbers are printed as
// decimal strings.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const D = await import(pathToFileURL(process.argv[2]).href);
const v = JSON.parse(readFileSync(process.argv[3], 'utf8'));
const sha = async (b) => D.hex(new Uint8Array(await crypto.subtle.digest('SHA-256', b)));
const out = { commitments: [], rounds: [], permutations: [], draws: [] };
for (const c of v.commitments) {
  const pub = { algorithm: 'feistel-aes256', version: 2, queue: c.slug, closesAtMs: c.closesAt, keyHash: await sha(D.unhex(c.key)) };
  if (c.chainHash) pub.beacon = { chainHash: c.chainHash, round: c.round };
  out.commitments.push({ keyHash: pub.keyHash, bytes: D.hex(D.commitmentBytes(pub)), hash: await D.commitmentHash(pub) });
}
for (const r of v.rounds) {
  const p = await D.permutation(D.unhex(r.seed), BigInt(r.size));
  const f = await p.round(r.round, BigInt(r.r));
  out.rounds.push({ h: String(p.h), block: D.hex(p.block(r.round, BigInt(r.r))), f: String(f) });
}
for (const p of v.permutations) {
  const perm = await D.permutation(D.unhex(p.seed), BigInt(p.size));
  const image = [];
  for (const x of p.x) image.push(String(await perm.permute(BigInt(x))));
  out.permutations.push({ image });
}
for (const d of v.draws) {
  const seed = await D.seedOf(D.unhex(d.key), d.randomness ? D.unhex(d.randomness) : null);
  const from = BigInt(d.from);
  const perm = await D.permutation(seed, BigInt(d.to) - from);
  const positions = [];
  for (const n of d.numbers) positions.push(String(from + 1n + (await perm.permute(BigInt(n) - from - 1n))));
  out.draws.push({ seed: D.hex(seed), positions });
}
process.stdout.write(JSON.stringify(out));
