"""The Representations page (van Aken et al. 2019; Ethayarajh 2019): state, blocks, charts."""
