"""The base of the driver's functional tests: Cinder's own test base, with a FastBlockISCSIDriver
configuration group pointing at the session's local cluster (see conftest's `cluster` fixture)."""

from cinder import context
from cinder.volume import configuration as conf
from cinder.volume import driver as cinder_driver

from cinder_case import CinderTestCase

from fastblock_cinder import driver as fb_driver


class ClusterDriverCase(CinderTestCase):
    #: the cinder.conf section of the backend under test
    GROUP = "fastblock-functional"

    def setUp(self):
        super().setUp()
        self.ctxt = context.get_admin_context()
        self.configuration = conf.Configuration(cinder_driver.volume_opts + fb_driver.fastblock_opts,
                                                config_group=self.GROUP)
        self.override_config("fastblock_namenode_urls", [self.namenode_url], group=self.GROUP)
        self.override_config("fastblock_gateway_port", self.iscsi_port, group=self.GROUP)
        self.override_config("volume_backend_name", "fastblock", group=self.GROUP)
