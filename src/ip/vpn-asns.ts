/**
 * Networks that VPN services run themselves, by ASN, that the project keeps: an address announced
 * by one of them is a VPN exit (their servers carry no subscribers of their own), so `is_vpn` can
 * be answered `true` from the ASN alone, with the open ASN data that ships with `npm ci`.
 *
 * It only ever says `true`. Most VPN exits sit on rented hosting (M247, Datacamp...; those are
 * `is_datacenter` through hosting-asns.ts), so an ASN missing here says nothing: `is_vpn` stays
 * unknown unless another source (MaxMind's Anonymous-IP database) answers.
 *
 * In: ASNs whose holder, as the RIR data spells it, is a VPN service. Out on purpose: holders whose
 * name only contains "VPN" but are access networks or whose business we could not tell (VPN de
 * Mexico, VPNET, VPN Infraestrutura de Redes, 10VPN Research Network), and security vendors whose
 * networks also carry their own offices and update servers (Avast). Add an ASN only with its
 * holder's name, checked against the ASN data (`@ip-location-db/asn`).
 */
export const VPN_ASNS: ReadonlyMap<number, string> = new Map([
  [39351, '31173 Services AB (Mullvad VPN)'],
  [49399, '31173 Services AB (Mullvad VPN)'],
  [214813, '31173 Services AB (Mullvad VPN)'],
  [216025, 'Mullvad VPN AB'],
  [62371, 'Proton AG (Proton VPN)'],
  [199218, 'Proton AG (Proton VPN)'],
  [136787, 'PacketHub S.A. (NordVPN)'],
  [141039, 'PacketHub S.A. (NordVPN)'],
  [147049, 'PacketHub S.A. (NordVPN)'],
  [203619, 'IVPN Limited'],
  [13926, 'Strong Technology, LLC (StrongVPN)'],
  [22781, 'Strong Technology, LLC (StrongVPN)'],
  [54203, 'Strong Technology, LLC (StrongVPN)'],
  [62651, 'Strong Technology, LLC (StrongVPN)'],
  [140952, 'Strong Technology, LLC (StrongVPN)'],
  [62635, 'VPNWholesaler.com'],
  [201665, 'Anonymizer, LLC'],
  [208765, 'Bullet Proof VPN Ltd'],
  [213163, 'FREE UNLIMITED VPN LTD'],
  [394104, 'IPLOCKVPN.COM'],
  [397282, 'Castle VPN'],
]);

export function isVpnAsn(asn: number): boolean {
  return VPN_ASNS.has(asn);
}
