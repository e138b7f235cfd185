package io.fastblock.storage.chain;

/** {@link ChainReconfigurationTest} with the tail writes its log and its chunk files. */
class InPlaceLayoutChainReconfigurationTest extends ChainReconfigurationTest {
    @Override
    TailLayout layout() {
        return TailLayout.LOG_AND_IN_PLACE;
    }
}
