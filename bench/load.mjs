// Load generator for the throughput benchmark, in its own process: `connections` keep-alive
// HTTPS connections POST the body from stdin for `seconds`; prints requests per second and
// p50/p99 latency (ms) as JSON.
import { Agent, request } from 'node:https';

const [url, connections, seconds] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
let body = '';
for await (const chunk of process.stdin) body += chunk;
const agent = new Agent({ keepAlive: true, maxSockets: connections, ca: process.env.BENCH_CA });
const latencies = [];
let errors = 0;
let measuring = false;
const end = Date.now() + 1000 + seconds * 1000; // one second of warm-up, not counted
setTimeout(() => (measuring = true), 1000);

function post() {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => {
          if (measuring) {
            if (res.statusCode === 200) latencies.push(performance.now() - started);
            else errors++;
          }
          resolve();
        });
      },
    );
    req.on('error', () => {
      if (measuring) errors++;
      resolve();
    });
    req.end(body);
  });
}

async function connection() {
  while (Date.now() < end) await post();
}

await Promise.all(Array.from({ length: connections }, connection));
agent.destroy();
latencies.sort((a, b) => a - b);
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
process.stdout.write(JSON.stringify({ rps: latencies.length / seconds, p50: at(0.5), p99: at(0.99), errors }));
