// pow.js: the proof of work a room may ask for before it issues a number,
// solved in pow-worker.js so the page stays smooth.

const TIMEOUT_MS = 120000;

// solve answers {nonce, ms} for the challenge, ms being the time the
// worker took. The worker must come from the page's own origin, so a
// worker URL on another origin is loaded from the same path on this one.
export function solve(workerUrl, challenge, bits) {
  return new Promise((resolve, reject) => {
    let url = new URL(workerUrl, location.href);
    if (url.origin !== location.origin) url = new URL(url.pathname + url.search, location.href);
    let worker;
    try {
      worker = new Worker(url.toString());
    } catch (e) {
      reject(e);
      return;
    }
    const started = performance.now();
    const timer = setTimeout(() => {
      worker.terminate();
      reject(new Error('proof of work timed out'));
    }, TIMEOUT_MS);
    worker.onmessage = (e) => {
      clearTimeout(timer);
      worker.terminate();
      if (e.data && typeof e.data.nonce === 'string') {
        resolve({ nonce: e.data.nonce, ms: Math.round(performance.now() - started) });
      } else {
        reject(new Error((e.data && e.data.error) || 'proof of work failed'));
      }
    };
    worker.onerror = () => {
      clearTimeout(timer);
      worker.terminate();
      reject(new Error('proof of work worker failed'));
    };
    worker.postMessage({ challenge: String(challenge), bits: Number(bits) || 0 });
  });
}
