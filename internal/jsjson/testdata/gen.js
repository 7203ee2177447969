// Writes stringify.json: each input beside JSON.stringify(JSON.parse(input)) as Node
// computes it. Run: node testdata/gen.js > testdata/stringify.json
'use strict';
const inputs = [
  '{"a":"<b>&amp;</b>","c":"\\u003cscript\\u003e"}',
  '"line\\u2028sep\\u2029para"',
  '"\\u0000\\u0001\\u001f\\u007f\\b\\f\\n\\r\\t\\"\\\\/"',
  '{"b":1,"a":2,"10":3,"9":4,"01":5,"4294967294":6,"4294967295":7,"-1":8,"1.5":9}',
  '{"a":1,"b":2,"a":3}',
  '[1.0,1e2,1E-7,0.000001,1e21,123456789012345678901234567890,-0,0.1,1.5e300,1e400,-1e400,5e-324,2e-7,100e-9,12345678901234567890]',
  '{"customerData":{"x":[true,false,null,{"":""}]}, "é":"ü€😀"}',
  '  [ ]  ',
  '{}',
  '"\\ud83d\\ude00 and \\u00e9"',
  '{"z":{"2":"b","1":"a"},"y":[{"0":0}]}',
];
const out = inputs.map((input) => ({input, want: JSON.stringify(JSON.parse(input))}));
process.stdout.write(JSON.stringify(out, null, 1) + '\n');
