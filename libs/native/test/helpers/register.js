// Lets a child `node` process run the TypeScript test helpers and lib/
// directly: `node -r ./register.js script.ts` (transpile only, no checks).
'use strict';
const fs = require('node:fs');
const ts = require('typescript');

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
    fileName: filename,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
      sourceMap: false,
    },
  });
  module._compile(outputText, filename);
};
