/** Posts an HTML form (application/x-www-form-urlencoded) without following redirects. */
export async function postForm(url: string, fields: Record<string, string>, cookie?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (cookie) headers.cookie = cookie;
  return fetch(url, { method: 'POST', headers, body: new URLSearchParams(fields).toString(), redirect: 'manual' });
}

export async function getPage(url: string, cookie?: string): Promise<Response> {
  return fetch(url, { headers: cookie ? { cookie } : {}, redirect: 'manual' });
}
