// `nest build` keeps the source layout (dist/apps/<app>/src/main.js). The documented entry points
// are dist/apps/<app>/main.js: write a one-line module there for every app that was built.
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
for (const app of ['api', 'worker']) {
  const dir = path.join(root, 'dist', 'apps', app);
  if (fs.existsSync(path.join(dir, 'src', 'main.js'))) {
    fs.writeFileSync(path.join(dir, 'main.js'), "require('./src/main.js');\n");
  }
}
