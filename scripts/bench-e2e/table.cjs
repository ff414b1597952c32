// Plain-text tables for bench:e2e (first column left-aligned, the others right-aligned).
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const fmtRatio = (x) => `${x.toFixed(2)}x`;

function printTable(header, rows) {
  const cells = [header, ...rows].map((row) => row.map((cell) => String(cell ?? '')));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  const line = (row) =>
    `  ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')}`;
  console.log(line(cells[0]));
  console.log(`  ${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of cells.slice(1)) console.log(line(row));
}

module.exports = { median, fmtRatio, printTable };
