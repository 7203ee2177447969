// WebSocket app that takes a second to listen, as an app loading its settings does,
// for `switchboard test --start`: on session:new a say and a gather of one digit; the
// gather's hook answers with a say and a hangup. It writes its pid to PID_FILE (so
// the test can check it was stopped) and listens on 127.0.0.1:PORT.
'use strict';

const fs = require('fs');
const {createServer} = require('http');
const {createEndpoint} = require('@jambonz/node-client-ws');
const {log, quiet} = require('./lib');

const server = createServer();
const makeService = createEndpoint({server, logger: quiet});
const svc = makeService({path: '/app'});

svc.on('session:new', (session) => {
  session
    .on('/menu', (evt) => {
      session.say({text: `You pressed ${evt.digits}. Goodbye.`}).hangup().reply();
    });
  session
    .say({text: 'Welcome.'})
    .gather({input: ['digits'], actionHook: '/menu', numDigits: 1, timeout: 5})
    .send();
});

if (process.env.PID_FILE) fs.writeFileSync(process.env.PID_FILE, `${process.pid}\n`);
const port = Number(process.env.PORT);
log('starting', {port});
setTimeout(() => server.listen(port, '127.0.0.1', () => log('ready', {port: server.address().port})), 1000);
process.on('SIGTERM', () => process.exit(0));
