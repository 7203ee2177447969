// WebSocket app built with @jambonz/node-client-ws for the protocol details jambonz
// apps rely on (issue 13). Its services, by path:
//   /verb    answers session:new with say + a redirect verb to /next, and replies to
//            /next with say + hangup (the SDK routes session:redirect to the hook's
//            handler);
//   /inject  answers session:new with a say, then sends the SDK's
//            injectCommand('redirect', {call_hook: '/moved'}) and replies to /moved
//            with say + hangup.
// Any other path gets the SDK's 404 to the upgrade. Every message the node sends is
// logged with its type ("raw"), beside what the handlers saw.
'use strict';

const {createServer} = require('http');
const {createEndpoint} = require('@jambonz/node-client-ws');
const {log, listen, quiet} = require('./lib');

const server = createServer();
const makeService = createEndpoint({server, logger: quiet});

const common = (path, session) => {
  log('session:new', {path, call_sid: session.call_sid});
  session.ws.on('message', (data) => {
    try {
      const msg = JSON.parse(data);
      log('raw', {path, type: msg.type, hook: msg.hook});
    } catch (err) {
      log('raw-unparsed', {path, error: err.message});
    }
  });
  session
    .on('jambonz:error', (evt) => log('jambonz:error', {path, data: evt}))
    .on('close', (code) => log('close', {path, code}));
};

makeService({path: '/verb'}).on('session:new', (session) => {
  common('/verb', session);
  session.on('/next', (evt) => {
    log('hook', {path: '/verb', hook: '/next', call_sid: evt.call_sid});
    session.say({text: 'Redirected.'}).hangup().reply();
  });
  session.say({text: 'Hello.'}).redirect({actionHook: '/next'}).send();
});

makeService({path: '/inject'}).on('session:new', (session) => {
  common('/inject', session);
  session.on('/moved', (evt) => {
    log('hook', {path: '/inject', hook: '/moved', call_sid: evt.call_sid});
    session.say({text: 'Moved.'}).hangup().reply();
  });
  session.say({text: 'Hello there, this is a longer prompt.'}).send();
  session.injectCommand('redirect', {call_hook: '/moved'});
  log('command-sent', {path: '/inject', command: 'redirect'});
});

listen(server);
