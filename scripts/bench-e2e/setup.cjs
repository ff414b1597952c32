// What the end-to-end benchmarks (bench:e2e, bench:sessions) share: building the apps once, and a
// free loopback port for each server they start.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');

/** Runs `npm run build` when one of `files` (relative to the repository) is missing. */
function ensureBuilt(files) {
  if (files.every((file) => fs.existsSync(path.join(ROOT, file)))) return;
  console.log('[bench] building (npm run build)');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

/** A TCP port free on 127.0.0.1 right now. */
async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

module.exports = { ensureBuilt, freePort };
