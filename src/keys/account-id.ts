/** An account's id: what keys, rule sets and lists are filed under, in URLs and on the command line. */
export const ACCOUNT_ID = /^[A-Za-z0-9_.-]{1,64}$/;
export const ACCOUNT_ID_RULE = '1 to 64 letters, digits, "_", "." or "-"';
