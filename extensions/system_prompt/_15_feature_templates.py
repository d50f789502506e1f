"""System sections: each feature plugin's `get_template(config)` (Crystal Lattice), the feature as its source."""
from a0nb.ext import Extension, extensible
from a0nb.ext import feature_templates, section


@extensible
def build_prompt(agent):
    return feature_templates(agent)


class FeatureTemplates(Extension):
    def execute(self, system_prompt=None, loop_data=None, **kwargs):
        for rendered in build_prompt(self.agent):
            system_prompt.append(section(rendered))
