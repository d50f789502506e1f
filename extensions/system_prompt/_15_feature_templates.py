"""System sections: each feature plugin's `get_template(config)` (Crystal Lattice), the feature as its source."""
from a0nb.ext import Extension, extensible
from a0nb.ext import feature_templates, section, template_features


@extensible
def build_prompt(agent):
    return feature_templates(agent)


def inputs(agent):
    """Nothing while no feature has a template; with some, None: their code is asked at every step."""
    return None if template_features(agent) else ()


class FeatureTemplates(Extension):
    section_inputs = staticmethod(inputs)

    def execute(self, system_prompt=None, loop_data=None, **kwargs):
        for rendered in build_prompt(self.agent):
            system_prompt.append(section(rendered))
