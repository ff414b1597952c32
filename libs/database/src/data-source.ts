// Entry point for the TypeORM CLI (`typeorm migration:show -d dist/libs/database/src/data-source.js`).
// `npm run migration:run` uses libs/database/src/migrate-cli.ts, which also creates the schema.
import { loadConfig } from '@hashq/config';
import { DataSource } from 'typeorm';

import { dataSourceOptions } from './data-source-options';

export default new DataSource(dataSourceOptions(loadConfig()));
