package io.fastblock.storage.chain;

/** {@link ChainReconfigurationTest} with the tail writes only its log. */
class LogLayoutChainReconfigurationTest extends ChainReconfigurationTest {
    @Override
    TailLayout layout() {
        return TailLayout.LOG;
    }
}
