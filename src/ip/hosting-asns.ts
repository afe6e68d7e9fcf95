/**
 * Well-known hosting and cloud networks, by ASN, that the project keeps: an address announced by one
 * of them is a server, not a subscriber line, so `is_datacenter` can be answered from the ASN alone
 * (the open ASN data makes this work out of the box). Names as the RIR data spells them.
 *
 * Left out on purpose: CDN and relay networks whose egress carries real users (Cloudflare 13335 for
 * WARP and iCloud Private Relay, Akamai 20940/36183 and Fastly 54113 for Private Relay), and transit
 * carriers (Cogent 174, NTT 2914, Hurricane Electric 6939). Add an ASN here only with its operator's
 * name, checked against the ASN data.
 */
export const HOSTING_ASNS: ReadonlyMap<number, string> = new Map([
  [16509, 'Amazon.com, Inc. (AWS)'],
  [14618, 'Amazon.com, Inc. (AWS)'],
  [7224, 'Amazon.com, Inc. (AWS)'],
  [8987, 'Amazon Data Services Ireland Ltd'],
  [15169, 'Google LLC'],
  [396982, 'Google LLC (Google Cloud)'],
  [19527, 'Google LLC'],
  [8075, 'Microsoft Corporation (Azure)'],
  [14061, 'DigitalOcean, LLC'],
  [393406, 'DigitalOcean, LLC'],
  [16276, 'OVH SAS'],
  [24940, 'Hetzner Online GmbH'],
  [213230, 'Hetzner Online GmbH'],
  [63949, 'Akamai Technologies, Inc. (Linode)'],
  [20473, 'The Constant Company, LLC (Vultr)'],
  [31898, 'Oracle Corporation (Oracle Cloud)'],
  [45102, 'Alibaba (US) Technology Co., Ltd.'],
  [37963, 'Hangzhou Alibaba Advertising Co., Ltd. (Alibaba Cloud)'],
  [132203, 'Shenzhen Tencent Computer Systems Company Limited (Tencent Cloud)'],
  [45090, 'Shenzhen Tencent Computer Systems Company Limited'],
  [55990, 'Huawei Cloud Service data center'],
  [136907, 'HUAWEI INTERNATIONAL PTE. LTD. (Huawei Cloud)'],
  [12876, 'Scaleway SAS'],
  [51167, 'Contabo GmbH'],
  [40021, 'Contabo Inc.'],
  [60781, 'LeaseWeb Netherlands B.V.'],
  [16265, 'LeaseWeb Network B.V.'],
  [28753, 'Leaseweb Deutschland GmbH'],
  [395954, 'Leaseweb USA, Inc.'],
  [8560, 'IONOS SE'],
  [9009, 'M247 Europe SRL'],
  [36352, 'HostPapa (ColoCrossing)'],
  [8100, 'QuadraNet Enterprises LLC'],
  [46606, 'Unified Layer'],
  [26496, 'GoDaddy.com, LLC'],
  [398101, 'GoDaddy.com, LLC'],
  [40676, 'Psychz Networks'],
  [53667, 'FranTech Solutions (BuyVM)'],
  [197540, 'netcup GmbH'],
  [62240, 'Clouvider Limited'],
  [212238, 'Datacamp Limited (CDN77)'],
  [60068, 'Datacamp Limited (CDN77)'],
  [202053, 'UpCloud Ltd'],
  [29802, 'HIVELOCITY, Inc.'],
  [61317, 'Hivelocity Inc'],
  [19318, 'Interserver, Inc'],
  [23470, 'ReliableSite.Net LLC'],
  [21859, 'Zenlayer Inc'],
  [49981, 'WorldStream B.V.'],
  [201814, 'MEVSPACE sp. z o.o.'],
  [210644, 'AEZA INTERNATIONAL LTD'],
  [4785, 'xTom Limited'],
  [22612, 'Namecheap, Inc.'],
  [35916, 'MULTACOM CORPORATION'],
]);

export function isHostingAsn(asn: number): boolean {
  return HOSTING_ASNS.has(asn);
}
