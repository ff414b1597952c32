/**
 * Piscina task of bench/server.js: SHA-256 (Node's crypto) of the bytes the
 * main thread shares through a SharedArrayBuffer (nothing is copied).
 */
'use strict';

const crypto = require('node:crypto');

module.exports = ({ shared }) =>
  crypto.createHash('sha256').update(new Uint8Array(shared)).digest('hex');
