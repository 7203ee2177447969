// A driver of @jambonz/node-client's REST client, unmodified: each stdin line is
// {"id", "account", "token", "entity": "calls"|"applications", "op", "args": [...]};
// each answer a stdout line {"id", "ok": true, "value"} or {"id", "ok": false,
// "error", "statusCode"}. Lines are run one at a time, in order. BASE_URL is the
// node's address.
'use strict';
const readline = require('readline');
const jambonz = require('@jambonz/node-client');

const clients = new Map();
function client(account, token) {
  const key = `${account} ${token}`;
  if (!clients.has(key)) clients.set(key, jambonz(account, token, {baseUrl: process.env.BASE_URL}));
  return clients.get(key);
}

const print = (o) => process.stdout.write(JSON.stringify(o) + '\n');
print({event: 'ready'});

let queue = Promise.resolve();
readline.createInterface({input: process.stdin}).on('line', (line) => {
  queue = queue.then(async() => {
    const {id, account, token, entity, op, args} = JSON.parse(line);
    try {
      const value = await client(account, token)[entity][op](...(args || []));
      print({id, ok: true, value: value === undefined ? null : value});
    } catch (err) {
      print({id, ok: false, error: err.message, statusCode: err.statusCode || 0});
    }
  });
});
