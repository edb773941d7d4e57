/**
 * The body of a uWebSockets.js POST, gathered from its chunks (uWS reuses each chunk's memory once
 * the callback returns, so every chunk is copied). `onBody` gets the body and a function that says
 * whether the client has gone since (a response must then not be written).
 */
import type uws from '@trufflesuite/uws-js-unofficial';

export function readPostBody(res: uws.HttpResponse, onBody: (body: Buffer, aborted: () => boolean) => void): void {
  let aborted = false;
  let chunks: Buffer[] | null = null;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((chunk, isLast) => {
    const copy = Buffer.copyBytesFrom(new Uint8Array(chunk));
    if (!isLast) {
      (chunks ??= []).push(copy);
      return;
    }
    onBody(chunks === null ? copy : Buffer.concat([...chunks, copy]), () => aborted);
  });
}
