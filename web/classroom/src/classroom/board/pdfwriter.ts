// A minimal PDF writer: one JPEG image filling each page. Enough to export
// the board, rasterised page by page, without a PDF library.

export interface JpegPage {
  jpeg: Uint8Array;
  /** Image size in pixels. */
  width: number;
  height: number;
}

const enc = new TextEncoder();

/**
 * Builds a PDF with one page per image, each pageWidth x pageHeight points
 * (default 960 x 540: 13.33 x 7.5 inches, the usual 16:9 slide).
 */
export function jpegPdf(pages: JpegPage[], title = '', pageWidth = 960, pageHeight = 540): Blob {
  const chunks: Uint8Array[] = [];
  const offsets: number[] = [];
  let length = 0;
  const put = (s: string | Uint8Array) => {
    const b = typeof s === 'string' ? enc.encode(s) : s;
    chunks.push(b);
    length += b.length;
  };
  const obj = (n: number, body: string) => {
    offsets[n] = length;
    put(`${n} 0 obj\n${body}\nendobj\n`);
  };

  // The comment's bytes above 127 mark the file as binary.
  put('%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n');
  // Objects: 1 catalog, 2 page tree, 3 info, then per page: page, contents, image.
  const first = 4;
  const kids = pages.map((_, i) => `${first + i * 3} 0 R`).join(' ');
  obj(1, '<< /Type /Catalog /Pages 2 0 R >>');
  obj(2, `<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`);
  obj(3, `<< /Title ${pdfString(title)} /Producer (Lectern) >>`);
  pages.forEach((pg, i) => {
    const n = first + i * 3;
    const w = fmt(pageWidth);
    const h = fmt(pageHeight);
    obj(
      n,
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${w} ${h}] /Resources << /XObject << /Im0 ${n + 2} 0 R >> >> /Contents ${n + 1} 0 R >>`,
    );
    const content = `q ${w} 0 0 ${h} 0 0 cm /Im0 Do Q`;
    obj(n + 1, `<< /Length ${enc.encode(content).length} >>\nstream\n${content}\nendstream`);
    offsets[n + 2] = length;
    put(
      `${n + 2} 0 obj\n<< /Type /XObject /Subtype /Image /Width ${pg.width} /Height ${pg.height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /Length ${pg.jpeg.length} >>\nstream\n`,
    );
    put(pg.jpeg);
    put('\nendstream\nendobj\n');
  });
  const count = first + pages.length * 3;
  const xref = length;
  let table = `xref\n0 ${count}\n0000000000 65535 f \n`;
  for (let n = 1; n < count; n++) table += `${String(offsets[n]).padStart(10, '0')} 00000 n \n`;
  put(table);
  put(`trailer\n<< /Size ${count} /Root 1 0 R /Info 3 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  return new Blob(chunks as BlobPart[], { type: 'application/pdf' });
}

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

/** A PDF text string: printable ASCII as a literal, anything else as UTF-16BE hex. */
function pdfString(s: string): string {
  if (/^[\x20-\x7e]*$/.test(s)) return `(${s.replace(/[\\()]/g, (c) => `\\${c}`)})`;
  let hex = 'FEFF';
  for (let i = 0; i < s.length; i++) hex += s.charCodeAt(i).toString(16).padStart(4, '0').toUpperCase();
  return `<${hex}>`;
}
