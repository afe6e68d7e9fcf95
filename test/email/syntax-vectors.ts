/**
 * E-mail syntax test vectors, a representative set taken from three peers' published suites:
 *
 * - `isemail`: Dominic Sayers' is_email test suite (tests.xml), as carried by hapijs/isemail,
 *   pyIsEmail and the Python `email-validator` package (tests/test_syntax.py). Its "valid" class
 *   includes RFC 5322 forms a mail server never sees in an envelope (comments, folding white space,
 *   quoted strings, domain literals): this service refuses those on purpose (README, "E-mail").
 * - `validator.js`: validatorjs/validator.js, test/validators/isEmail.test.js (default options).
 * - `email-validator`: manishsaraan/email-validator, test.js.
 * - `python-email-validator`: JoshData/python-email-validator, tests/test_syntax.py, its "unsafe
 *   characters" (Unicode the specifications allow but no mailbox should hold).
 * - `ours`: a few of our own where the suites above have no plain example of a class.
 *
 * The vectors are data; the reasons are ours.
 */
export type Source = 'isemail' | 'validator.js' | 'email-validator' | 'python-email-validator' | 'ours';

export interface Vector {
  address: string;
  source: Source;
  why: string;
}

const long = (n: number) => 'abcdefghijklmnopqrstuvwxyz'.repeat(3).slice(0, n);

/** Addresses no mail server takes in an envelope (RFC 5321), or that a sign-up should never hold. */
export const REFUSED: readonly Vector[] = [
  // Comments and folding white space (RFC 5322 CFWS): never part of an RFC 5321 path.
  { address: '(comment)test@iana.org', source: 'isemail', why: 'a comment' },
  { address: '((comment)test@iana.org', source: 'isemail', why: 'an unclosed comment' },
  { address: '(comment(comment))test@iana.org', source: 'isemail', why: 'a nested comment' },
  { address: 'test(comment)test@iana.org', source: 'isemail', why: 'a comment inside the local part' },
  { address: 'test@(comment)iana.org', source: 'isemail', why: 'a comment before the domain' },
  { address: 'test@iana.org(comment\\)', source: 'isemail', why: 'a comment after the domain' },
  { address: '(comment\\)test@iana.org', source: 'isemail', why: 'an escaped comment end' },
  { address: '(test@iana.org', source: 'isemail', why: 'a stray "("' },
  { address: 'test.(comment)test@iana.org', source: 'isemail', why: 'a comment after a dot' },
  { address: ' test @iana.org', source: 'isemail', why: 'white space around the local part' },
  { address: 'test . test@iana.org', source: 'isemail', why: 'white space around a dot' },
  { address: '\r\n test@iana.org', source: 'isemail', why: 'folding white space' },
  { address: ' test@iana.org', source: 'isemail', why: 'a leading space' },
  { address: 'test@iana.org ', source: 'isemail', why: 'a trailing space' },
  { address: 'test@ iana .com', source: 'isemail', why: 'spaces in the domain' },
  { address: '\rtest@iana.org', source: 'isemail', why: 'a bare CR' },
  { address: '\ntest@iana.org', source: 'isemail', why: 'a bare LF' },
  { address: 'test@iana.org\n', source: 'isemail', why: 'a trailing LF' },
  // Quotes: unbalanced, stray, or a quoted string (refused as a whole: see the README).
  { address: '"test@iana.org', source: 'isemail', why: 'an unclosed quote' },
  { address: 'test"@iana.org', source: 'isemail', why: 'a stray quote' },
  { address: '"""@iana.org', source: 'isemail', why: 'three quotes' },
  { address: '"\\"@iana.org', source: 'isemail', why: 'an escaped closing quote' },
  { address: '"test"test@iana.org', source: 'isemail', why: 'atext after a quoted string' },
  { address: 'test"text"@iana.org', source: 'isemail', why: 'a quoted string after atext' },
  { address: '"test""test"@iana.org', source: 'isemail', why: 'two quoted strings' },
  { address: '"test".test@iana.org', source: 'isemail', why: 'the obsolete mixed local part' },
  { address: '"test\u0000"@iana.org', source: 'isemail', why: 'NUL in a quoted string' },
  { address: '"test"@iana.org', source: 'isemail', why: 'a quoted local part' },
  { address: '"test\\ test"@iana.org', source: 'isemail', why: 'a quoted pair' },
  { address: '"foobar@gmail.com', source: 'validator.js', why: 'an unclosed quote' },
  { address: '"foo"bar@gmail.com', source: 'validator.js', why: 'atext after a quoted string' },
  { address: 'foo"bar"@gmail.com', source: 'validator.js', why: 'a quoted string after atext' },
  { address: 'partially."quoted"@sld.com', source: 'email-validator', why: 'a partly quoted local part' },
  { address: '"quoted"@sld.com', source: 'email-validator', why: 'a quoted local part' },
  { address: '"back\\slash"@sld.com', source: 'email-validator', why: 'a quoted backslash' },
  // Backslashes, brackets and other specials outside quotes.
  { address: 'test\\@test@iana.org', source: 'isemail', why: 'a backslash outside quotes' },
  { address: 'wrong()[]",:;<>@@gmail.com', source: 'validator.js', why: 'specials and two @' },
  { address: '(),:;`|@more-invalid-characters-in-local.org', source: 'email-validator', why: 'specials' },
  { address: '<>@[]\\`|@even-more-invalid-characters-in-local.org', source: 'email-validator', why: 'angle brackets, square brackets, backslash' },
  { address: '! #$%`|@invalid-characters-in-local.org', source: 'email-validator', why: 'a space' },
  { address: 'test123+invalid! sub_address@gmail.com', source: 'validator.js', why: 'a space' },
  { address: 'nbsp\u00a0test@test.com', source: 'validator.js', why: 'a no-break space' },
  { address: 'a[b]c@example.com', source: 'ours', why: 'square brackets outside a domain literal' },
  { address: 'a,b@example.com', source: 'ours', why: 'a comma' },
  { address: '\u007f@iana.org', source: 'isemail', why: 'DEL' },
  { address: '\u0007@iana.org', source: 'isemail', why: 'BEL' },
  // Dots.
  { address: '.test@iana.org', source: 'isemail', why: 'a leading dot' },
  { address: 'test.@iana.org', source: 'isemail', why: 'a trailing dot' },
  { address: 'two..consecutive-dots@sld.com', source: 'email-validator', why: 'two dots in a row' },
  { address: 'gmail...ignores...dots...@gmail.com', source: 'validator.js', why: 'dots in a row and at the end' },
  { address: '.dot-start-and-end.@sil.com', source: 'email-validator', why: 'dots at both ends' },
  // Lengths, in octets.
  { address: `${long(65)}@iana.org`, source: 'isemail', why: 'a local part of 65 octets' },
  { address: 'the-local-part-is-invalid-if-it-is-longer-than-sixty-four-characters@sld.net', source: 'email-validator', why: 'a local part of 68 octets' },
  { address: `${'\uff47\uff4d\uff41\uff49\uff4c'.repeat(5)}@gmail.com`, source: 'validator.js', why: 'a local part of 25 characters but 75 octets' },
  { address: `${'a'.repeat(64)}@${'a'.repeat(63)}.${'a'.repeat(63)}.${'a'.repeat(63)}.${'a'.repeat(58)}.com`, source: 'validator.js', why: 'an address of 319 octets' },
  { address: `${long(64)}@${long(63)}.${long(63)}.${long(62)}`, source: 'isemail', why: 'an address over 254 octets' },
  { address: `test@${long(64)}.com`, source: 'isemail', why: 'a domain label of 64 octets' },
  // Domains.
  { address: 'test@', source: 'isemail', why: 'no domain' },
  { address: '@iana.org', source: 'isemail', why: 'no local part' },
  { address: 'test', source: 'isemail', why: 'no @' },
  { address: 'double@a@com', source: 'email-validator', why: 'two @' },
  { address: 'test@iana.org.', source: 'isemail', why: 'a trailing dot on the domain' },
  { address: 'foo@bar.co.uk.', source: 'validator.js', why: 'a trailing dot on the domain' },
  { address: 'test@.iana.org', source: 'isemail', why: 'a leading dot in the domain' },
  { address: 'test@iana..com', source: 'isemail', why: 'an empty domain label' },
  { address: 'test@-iana.org', source: 'isemail', why: 'a label starting with a hyphen' },
  { address: 'test@iana-.com', source: 'isemail', why: 'a label ending with a hyphen' },
  { address: 'test@iana.org-', source: 'isemail', why: 'a top-level label ending with a hyphen' },
  { address: 'foo@_bar.com', source: 'validator.js', why: 'an underscore in the domain' },
  { address: 'test@iana/icann.org', source: 'isemail', why: 'a slash in the domain' },
  { address: 'test@[255.255.255.255]', source: 'isemail', why: 'an address literal' },
  { address: 'test@[IPv6:1111:2222:3333:4444:5555:6666:7777:8888]', source: 'isemail', why: 'an IPv6 address literal' },
  { address: 'test@[1.2.3.4', source: 'isemail', why: 'an unclosed domain literal' },
  { address: 'test@a[255.255.255.255]', source: 'isemail', why: 'a bracket inside the domain' },
  { address: 'unbracketed-IP@127.0.0.1', source: 'email-validator', why: 'an IP address as the domain' },
  { address: 'IP-and-port@127.0.0.1:25', source: 'email-validator', why: 'a port' },
  { address: 'missing-dot-before-tld@com', source: 'email-validator', why: 'a single-label domain' },
  { address: 'test1@invalid.co m', source: 'validator.js', why: 'a space in the domain' },
  { address: 'test@\u007f.org', source: 'isemail', why: 'DEL in the domain' },
  // Unicode that no mailbox should hold.
  { address: '\ud800@example.com', source: 'validator.js', why: 'a lone surrogate' },
  { address: 'user\u202ereversed@example.com', source: 'python-email-validator', why: 'a right-to-left override' },
  { address: 'zero\u200bwidth@example.com', source: 'python-email-validator', why: 'a zero-width space' },
  { address: '\u0300accent@example.com', source: 'python-email-validator', why: 'a leading combining mark' },
  { address: 'private\ue000@example.com', source: 'python-email-validator', why: 'a private-use character' },
];

/** Addresses every one of the peers accepts, and so do we. */
export const ACCEPTED: readonly Vector[] = [
  { address: 'test@iana.org', source: 'isemail', why: 'plain' },
  { address: 'test@nominet.org.uk', source: 'isemail', why: 'a second-level registry' },
  { address: 'test.test@iana.org', source: 'isemail', why: 'a dot' },
  { address: "!#$%&`*+/=?^`{|}~@iana.org", source: 'isemail', why: 'every special atext character' },
  { address: "&'*+-./=?^_{}~@other-valid-characters-in-local.net", source: 'email-validator', why: 'atext specials' },
  { address: '123@iana.org', source: 'isemail', why: 'digits only' },
  { address: 'test@123.com', source: 'isemail', why: 'a digit-only label' },
  { address: `${long(64)}@iana.org`, source: 'isemail', why: 'a local part of 64 octets' },
  { address: `${'a'.repeat(64)}@${'a'.repeat(63)}.com`, source: 'validator.js', why: 'longest local part and label' },
  { address: 'test@g--a.com', source: 'isemail', why: 'two hyphens inside a label' },
  { address: 'test@xn--hxajbheg2az3al.xn--jxalpdlp', source: 'isemail', why: 'an A-label domain' },
  { address: 'xn--test@iana.org', source: 'isemail', why: 'an A-label-looking local part' },
  { address: 'hans@m\u7aefller.com', source: 'validator.js', why: 'an internationalised domain' },
  { address: 'hans.m\u7aefller@test.com', source: 'validator.js', why: 'non-ASCII in the local part (RFC 6531)' },
  { address: 'test|123@m\u7aefller.com', source: 'validator.js', why: 'a pipe' },
  { address: 'some.name.midd.leNa.me.and.locality+extension@GoogleMail.com', source: 'validator.js', why: 'dots and a +tag' },
  { address: 'backticks`are`legit@test.com', source: 'email-validator', why: 'backticks' },
  { address: 'the-total-length@of-an-entire-address.cannot-be-longer-than-two-hundred-and-fifty-four-characters.and-this-address-is-254-characters-exactly.so-it-should-be-valid.and-im-going-to-add-some-more-words-here.to-increase-the-lenght-blah-blah-blah-blah-bla.org', source: 'email-validator', why: '254 octets exactly' },
];
