"""Each LTI candidate account becomes its platform user's ``auth_user`` (django-lti's link),
which the erasure follows to clear the platform's record of the person (name, email,
picture): accounts made before this migration were linked through ``LaunchAccount`` only."""

from django.db import migrations


def link_candidates(apps: object, schema_editor: object) -> None:
    """Set ``LtiUser.auth_user`` to the candidate account of each platform user without one."""
    get = apps.get_model  # type: ignore[attr-defined]
    lti_user_model = get("lti_tool", "LtiUser")
    for account in get("lti", "LaunchAccount").objects.filter(role="candidate"):
        lti_user_model.objects.filter(pk=account.lti_user_id, auth_user=None).update(
            auth_user_id=account.user_id
        )


class Migration(migrations.Migration):
    dependencies = [("lti", "0003_placements")]

    operations = [migrations.RunPython(link_candidates, migrations.RunPython.noop)]
